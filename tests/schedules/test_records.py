"""dynamics.schedules: every runner a claim or a glued text reads returns a typed record
(:class:`dynamics.results.Record`), read by attribute, and a payload with a field renamed is
refused at once, naming the field (the chapter precomputes nothing: no data file to load)."""
import pytest

from dynamics.schedules import claims as C
from dynamics.schedules import experiments as E
from dynamics.schedules import valley as V
from dynamics.schedules.science import CooldownConfig, PowerLawConfig

TINY = PowerLawConfig(d=8, horizon0=8, n_horizons=2, replicas=2)


def _renamed(rec, field: str) -> dict:
    payload = rec.to_dict()
    payload[field + "_renamed"] = payload.pop(field)
    return payload


def _refused(rec, field: str):
    kind = type(rec)
    with pytest.raises(ValueError, match=rf"{kind.__name__}: no field {field}; unknown field "
                                         rf"{field}_renamed"):
        kind.of(_renamed(rec, field))


def test_section_1_runs_are_records_and_refuse_a_renamed_field():
    r = E.run_anytime(TINY, seed=0)
    assert isinstance(r, E.Anytime) and isinstance(r.sim, E.Risks) and r.config is TINY
    _refused(r, "exact")
    _refused(r.sim, "tail")
    e = E.best_exponent(TINY, gammas=(0.0, 0.5), t0_factors=(1.0,))
    assert isinstance(e, E.BestExponent)
    _refused(e, "best_by_t0")
    runs = C.claim_runs("smoke", [0], anytime=r)
    assert isinstance(runs, E.ClaimRuns) and runs.anytime[0] is r
    assert all(isinstance(x, E.BestExponent) for x in runs.exponents.values())


def test_section_5_and_the_valley_runs_are_records_and_refuse_a_renamed_field():
    r = E.run_clock(TINY, seed=0, n_evals=4)
    assert isinstance(r, E.Clock) and r.config is TINY
    _refused(r, "expected_no_decay")
    v = V.run_valley(steps=20, replicas=2)
    assert isinstance(v.summary, V.ValleySummary) and isinstance(v.config, V.ValleySettings)
    _refused(v, "stationary")
    _refused(v.summary, "hill_share")


def test_sections_2_to_4_records_build_their_parts_and_refuse_a_renamed_field():
    avg = {"steps": [2], "train_loss": [0.5], "test_loss": [0.6]}
    r = E.Cooldown.of(dict(names=["constant"], seeds=[0], budgets=[2], starts=[2], steps=[0, 2],
                           train_loss={0: {"constant": [1.0, 0.5]}},
                           test_loss={0: {"constant": [1.0, 0.6]}},
                           test_acc={0: {"constant": [0.1, 0.5]}},
                           averages={0: {"ema": avg}}, etas={"constant": [0.1, 0.1]},
                           config=CooldownConfig()))
    assert r.averages[0]["ema"] == E.Average(**avg)   # a dict of dicts of records, built
    one = r.at_seed(0)
    assert isinstance(one, E.CooldownSeed) and one.train_loss == {"constant": [1.0, 0.5]}
    _refused(r, "averages")
    _refused(E.Average(**avg), "test_loss")
    losses = {"train_loss": {0: {0.1: [1.0]}}, "test_loss": {0: {0.1: [1.0]}},
              "test_acc": {0: {0.1: [0.5]}}}
    sf = E.ScheduleFree.of(dict(lrs=[0.1], seeds=[0], steps=[2], budgets=[2], warmup=0,
                                methods={m: losses for m in E.SF_METHODS},
                                config=CooldownConfig()))
    assert isinstance(sf.methods["cosine"], E.Losses) and C.tuned_lr(sf, "cosine") == 0.1
    _refused(sf, "methods")
    _refused(sf.methods["cosine"], "test_acc")


def test_the_claims_refuse_a_run_that_is_not_a_record():
    with pytest.raises(ValueError, match="run_cooldown"):
        C.cooldown_claims({"seeds": [0]})
    assert C.published_claims() == []   # nothing precomputed: every row is judged live
