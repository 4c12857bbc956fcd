"""The page-time runners' records (dynamics.initialization.records): each payload reads back as
the record it came from, and a renamed field, at the top or in a nested record, is refused,
naming it (Signal, SignalStats, RankGrowth, GuessingRun, Isometry, IsoCase, WidthRun,
WidthCurves); the runners return them."""
import pytest

from dynamics.initialization import experiments as E
from dynamics.initialization import records as R
from dynamics.initialization import science as S


def _stats(lsuv=False):
    return R.SignalStats(act_std=[1.0, 0.5], grad_norm=[0.2, 0.3], grad_in=[0.4, 0.4],
                         out_var=[1.0, 1.0, 1.0], start_out_var=[2.0, 2.0, 2.0] if lsuv else None)


def _case():
    return R.IsoCase(activation="tanh", init="orthogonal", sigma_w2=1.0, sigma_b2=1e-5,
                     chi_1=1.0, control_sigma_w2=0.9, control_mean=0.5, control_chi_1=0.9,
                     mean=[1.0, 1.0], rel_var=[0.1, 0.2], small=[0.0, 0.0], theory=[0.1, 0.2])


def _curves():
    return R.WidthCurves(loss=[[1.0, 0.5, 0.7]], best_log2_lr=[-1.0], inside=[True])


RECORDS = [
    (R.Signal, lambda: R.Signal(tanh={"he": _stats()}, relu={"lsuv": _stats(lsuv=True)})),
    (R.RankGrowth, lambda: R.RankGrowth(half_steps=[10, None], large_after=[1, None],
                                        final=[0.1, 0.9], balanced=[0.5, 0.8], large=0.3,
                                        steps=100)),
    (R.GuessingRun, lambda: R.GuessingRun(depths=[2, 8], n_classes=10, n_nets=2,
                                          scale="critical", width=16, tanh=[[0.2, 0.3]],
                                          tanh_class=[[1, 2]], relu=[[0.9, 0.8]],
                                          relu_class=[[3, 3]])),
    (R.Isometry, lambda: R.Isometry(depths=[1, 4], width=16, n_nets=2, q_star=0.01, seed=0,
                                    cases={"tanh orthogonal": _case()})),
    (R.WidthRun, lambda: R.WidthRun(widths=[16, 32], log2_lrs=[-2.0, -1.0, 0.0], steps=10,
                                    hidden_layers=2, batch_size=8, n_train=100, seed=0,
                                    base_width=16, sp=_curves(), mup=_curves(),
                                    wall_time=0.0)),
]


@pytest.mark.parametrize("rec, build", RECORDS, ids=[r.__name__ for r, _ in RECORDS])
def test_record_payload_reads_back_and_a_renamed_field_is_refused(rec, build):
    one = build()
    payload = one.to_dict()
    assert rec.of(payload) == one
    top = dict(payload)
    key = next(iter(top))
    top[key + "_renamed"] = top.pop(key)
    with pytest.raises(ValueError, match=f"{key}_renamed"):
        rec.of(top)


@pytest.mark.parametrize("rec, payload, where", [
    (R.Signal, lambda: {"tanh": {"he": {**_stats().to_dict(), "act_stds": [1.0]}}},
     r"Signal.tanh\['he'\] does not match SignalStats: .*unknown field act_stds"),
    (R.Isometry, lambda: {**RECORDS[3][1]().to_dict(),
                          "cases": {"tanh orthogonal": {**_case().to_dict(), "rel_vars": [0.1]}}},
     r"Isometry.cases\['tanh orthogonal'\] does not match IsoCase: .*unknown field rel_vars"),
    (R.WidthRun, lambda: {**RECORDS[4][1]().to_dict(), "mup": dict(loss=[], best_lr=[],
                                                                    inside=[])},
     r"WidthRun.mup does not match WidthCurves: no field best_log2_lr; unknown field best_lr"),
])
def test_nested_records_refuse_a_renamed_field_naming_it(rec, payload, where):
    with pytest.raises(ValueError, match=where):
        rec.of(payload())


def test_runners_return_their_records():
    sig = E.run_signal(S.SignalConfig.for_profile("smoke", depth=3, width=8, n_inputs=16),
                       inits=("he", "lsuv"), activations=("relu",))
    assert isinstance(sig, R.Signal) and sig.activations() == ["relu"] and not sig.tanh
    assert isinstance(sig.relu["lsuv"], R.SignalStats) and sig.relu["he"].start_out_var is None
    assert R.Signal.of(sig.to_dict()) == sig
    with pytest.raises(ValueError, match="gelu"):
        sig.nets("gelu")
    igb = E.run_guessing_bias(S.GuessingConfig.for_profile("smoke", depths=[2], n_nets=2),
                              activations=["relu"])
    assert isinstance(igb, R.GuessingRun) and igb.tanh is None and len(igb.bias("relu")) == 1
