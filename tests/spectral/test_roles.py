"""dynamics.spectral.roles: each role's duality map is the steepest unit step of its norm
(checked against the dual norm's closed form, random unit directions and torch's own
normalize/sign/SVD), the per-second arithmetic, and the step timer's bookkeeping (its
seconds are never asserted: wall-clock time depends on the machine)."""
import pytest
import torch
import torch.nn.functional as F

from dynamics import plots
from dynamics.spectral import figures as Fig
from dynamics.spectral.experiments import run_roles
from dynamics.spectral.records import Practice, StepTable
from dynamics.spectral import roles as E
from dynamics.spectral import science as S
from known import known_answer

NORMS = list(E.ROLE_NORMS)


def gradient(seed=0, shape=(48, 24)):
    return S.random_matrix(*shape, "power law", seed=seed).double()


@known_answer(E.duality_map, E.role_norm,
              how="closed-form dual norms: the gain of the unit map equals the nuclear norm, √d·Σ‖columns‖₂ or Σ|G|, and no random unit direction beats it")
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_map_is_the_steepest_unit_step_of_its_norm(norm, seed):
    """The map has unit norm, and ⟨G, D⟩ at the map equals the dual norm of G (nuclear for
    spectral, √d·Σ‖columns‖₂ for ℓ1→RMS, Σ|G| for ℓ∞), which no random unit direction beats."""
    G = gradient(seed)
    D = E.duality_map(G, norm).double()
    assert E.role_norm(D, norm) == pytest.approx(1.0, rel=1e-6)
    gain = float((G * D).sum())
    dual = {"spectral": float(torch.linalg.svdvals(G).sum()),
            "l1_to_rms": G.shape[0] ** 0.5 * float(G.norm(dim=0).sum()),
            "linf": float(G.abs().sum())}[norm]
    assert gain == pytest.approx(dual, rel=1e-6)
    for R in E.random_unit_directions(G.shape, norm, 300, seed=seed):
        assert float((G * R).sum()) <= gain


def test_the_maps_match_torchs_own_operations():
    """U Vᵀ from torch's SVD, unit-RMS columns from F.normalize, sign from torch.sign."""
    G = gradient(3, (40, 10))
    U, _, Vh = torch.linalg.svd(G, full_matrices=False)
    assert torch.allclose(E.duality_map(G, "spectral"), U @ Vh, atol=1e-10)
    assert torch.allclose(E.duality_map(G, "l1_to_rms"), F.normalize(G, dim=0) * 40 ** 0.5,
                          atol=1e-10)
    assert torch.equal(E.duality_map(G, "linf"), torch.sign(G))
    Z = G.clone()
    Z[:, 2] = 0  # a token absent from the batch: its column stays zero, not NaN
    assert torch.equal(E.duality_map(Z, "l1_to_rms")[:, 2], torch.zeros(40, dtype=Z.dtype))


def test_the_table_puts_each_norms_map_on_its_diagonal():
    assert list(run_roles(4, draws=10).by_seed) == [4, 5, 6]  # the claims' seeds, from the page's
    t = E.steepest_table(gradient(0), draws=50)
    assert E.steepest_holds(t) and E.steepest_margin(t) > 1
    assert set(t.gain) == set(NORMS) and t.draws == 50
    fig = Fig.roles_figure(t)
    z = fig.data[0].z
    assert [row[i] for i, row in enumerate(z)] == pytest.approx([1.0, 1.0, 1.0])
    plots.house(plots.go.Figure(fig))


def test_bad_input_names_the_setting():
    with pytest.raises(ValueError, match="unknown norm"):
        E.duality_map(gradient(), "frobenius")
    with pytest.raises(ValueError, match="2-D"):
        E.role_norm(torch.ones(5), "linf")
    with pytest.raises(ValueError, match="reps"):
        E.step_seconds(practiced({"adamw": 1e-3, "muon": 0.02}), reps=0)
    with pytest.raises(ValueError, match="muon_fp32"):
        E.per_second({"muon": 10, "adamw": 30}, {"adamw": 1.0}, "muon_fp32")


def test_per_second_is_per_step_over_the_cost_of_a_step():
    r = E.per_second({"muon": 10, "adamw": 30}, {"muon": 0.004, "adamw": 0.001})
    assert r["per_step"] == 3 and r["cost"] == pytest.approx(4.0)
    assert r["per_second"] == pytest.approx(0.75)  # three times fewer steps, four times dearer
    assert E.per_second({"muon": None, "adamw": 30}, {"muon": 2.0, "adamw": 1.0})["per_second"] is None


def practiced(best: dict) -> Practice:
    """A run_practice result with no runs: the smoke config and the best rates (what the timer reads)."""
    return Practice(sweeps={}, best=best, timed={}, target=0.0, data="", config=S.PracticeConfig.for_profile("smoke"))


def test_step_seconds_times_every_optimizer_in_turns():
    """The bookkeeping only (how long a step takes depends on the machine)."""
    practice = practiced({"adamw": 3e-3, "muon": 0.05})
    r = E.step_seconds(practice, reps=3, block=2, warmup=1)
    assert set(r["median"]) == set(r["cpu"]) == {"adamw", "muon", "muon_fp32", "adamw_again"}
    assert E.noise_floor(r) >= 1
    assert all(len(v) == 3 for v in r["wall"].values()) and r["reps"] == 3 and r["block"] == 2
    assert all(v > 0 for v in r["median"].values())


def test_a_dry_run_times_one_step_of_each(monkeypatch):
    """A dry run proves the timing runs at the profile's sizes: one round of one step each."""
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    practice = practiced({"adamw": 3e-3, "muon": 0.05})
    r = E.step_seconds(practice, reps=5, block=3)
    assert r["reps"] == r["block"] == 1 and all(len(v) == 1 for v in r["wall"].values())


@known_answer(E.noise_floor, E.lead_words, E.leads_words,
              how="constructed timings: AdamW timed at 1.00 and 1.05 ms has a floor of exactly "
                  "1.05; a lead of 1.01 inside it is noise, 1.2 beyond it a lead, 0.9 below "
                  "its inverse behind; against two timings 1.70 and 2.61 (floor 1.545) ahead, 1.40 and 2.61 neither, 0.415 and 0.641 behind, 0.45 and 0.70 neither")
def test_a_lead_per_second_must_beat_the_runs_own_noise_floor():
    cost = {"median": {"adamw": 1.00e-3, "adamw_again": 1.05e-3, "muon": 2e-3}}
    assert E.noise_floor(cost) == pytest.approx(1.05)
    assert E.noise_floor({"median": {"adamw": 2.0, "adamw_again": 2.0}}) == 1.0
    assert E.lead_words(1.01, 1.05).startswith("within noise")  # the finding's 1.01x
    assert E.lead_words(1.2, 1.05).startswith("ahead")
    assert E.lead_words(0.9, 1.05).startswith("behind")
    assert E.lead_words(1 / 1.04, 1.05).startswith("within noise")
    assert E.lead_words(None, 1.05).startswith("not measured")
    # against both AdamW timings: ahead or behind only beyond the floor against both
    assert E.leads_words([2.61, 1.70], 1.545).startswith("ahead")
    assert E.leads_words([2.61, 1.40], 1.545).startswith("neither")
    assert E.leads_words([0.641, 0.415], 1.545).startswith("behind")
    assert E.leads_words([0.70, 0.45], 1.545).startswith("neither")
    assert E.leads_words([None, 1.0], 1.545).startswith("not measured")
    with pytest.raises(ValueError, match="adamw_again"):
        E.noise_floor({"median": {"adamw": 1.0}})
    with pytest.raises(ValueError, match="at least 1"):
        E.lead_words(1.2, 0.9)


@known_answer(E.per_second,
              how="constructed steps and seconds: three times fewer steps at four times the "
                  "cost of a step is 3/4 of AdamW's speed")
def test_per_second_on_a_constructed_case():
    r = E.per_second({"muon": 10, "adamw": 30}, {"muon": 0.004, "adamw": 0.001})
    assert r["per_second"] == pytest.approx(0.75)


@known_answer(E.steepest_table, E.steepest_margin, E.steepest_holds,
              how="a constructed table: own gains 2, 3, 4 against best others 1, 2, 1 give a "
                  "margin of exactly min(2, 1.5, 4) = 1.5; a foreign map on a diagonal fails; "
                  "and on a real gradient each diagonal gain is the norm's closed-form dual norm")
def test_the_steepest_measures_on_a_constructed_table():
    norms = list(E.ROLE_NORMS)
    gain = {n: {m: 0.5 for m in norms} for n in norms}
    for n, own, other in zip(norms, (2.0, 3.0, 4.0), (1.0, 2.0, 1.0)):
        gain[n][n] = own
        gain[n][next(m for m in norms if m != n)] = other
    table = StepTable(gain=gain, random={n: 0.1 for n in norms}, draws=0)
    assert E.steepest_margin(table) == pytest.approx(1.5)
    assert E.steepest_holds(table)
    gain[norms[0]][norms[1]] = 5.0  # a foreign map beats the own one
    assert not E.steepest_holds(table) and E.steepest_margin(table) < 1
    G = gradient(0)
    t = E.steepest_table(G, draws=20)
    assert t.gain["spectral"]["spectral"] == pytest.approx(float(torch.linalg.svdvals(G).sum()), rel=1e-5)
    assert t.gain["linf"]["linf"] == pytest.approx(float(G.abs().sum()), rel=1e-5)
