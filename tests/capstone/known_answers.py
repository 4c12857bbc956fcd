"""Public functions of the capstone's measure modules that compute no quantity the page
reports (tests/known.py, tests/test_known_answers.py)."""
from dynamics.capstone import science as S

NOT_MEASURES = {
    S.hidden_matrix: "selects which weight matrix the rank measures read; computes nothing",
}
