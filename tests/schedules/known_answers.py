"""Schedules' public functions of its measure modules that compute no quantity the page reports
(tests/test_known_answers.py)."""
from dynamics.schedules import science as S

NOT_MEASURES = {
    S.schedule_table: "a config helper: stacks schedule() rows (schedule has its known-answer test)",
}
