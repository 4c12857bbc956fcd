"""Neural collapse, the facts: every number the chapter's prose glues about its runs, one
function per run (``*_numbers``), each threshold included as the page prints it. The claims
rows that judge the same runs, and the precomputed files' numbers, are :mod:`.claims`'."""
from __future__ import annotations

import numpy as np

from .. import plots
from ..train import History
from .claims import (IMB_NET_TOL, IMB_SLOPE_H, IMB_SLOPE_W, ORTH_COS, ORTHOGONAL, _decay, _kept,
                     _nc1_fall, held_out_counts)
from .experiments import Conditions
from .figures import TIE_REL, angle_range, imbalance_trends, range_text
from .losses import least_squares_split, loss_numbers
from .science import (at_zero_error, bias_free_nc3, cosine_gram, in_span_fraction, measure,
                      terminal_phase_start)
from .theory import minority_collapse_threshold

__all__ = ["run_numbers", "simplex_numbers", "conditions_numbers", "imbalance_numbers"]


def _pct(v: float, spec: str = ".2g") -> str:
    return f"{100 * v:{spec}}%"


def run_numbers(history: History, ce: History, model, data) -> dict:
    """Section 1's numbers, every one its prose and its exercises glue: the run (``history``,
    trained with ``held_out``; ``model`` its network, ``data`` its data), its network on the
    held-out set, and the comparison with the cross-entropy run ``ce``
    (:func:`.losses.loss_numbers`, and Han et al.'s least-squares split)."""
    h = history
    etf = h.last("etf_distance")
    test = measure(model, data.x_test, data.y_test, data.n_classes)
    split = least_squares_split(model, data)  # the ridge matched to the head's norm
    plain = least_squares_split(model, data, weight_decay=0)  # no ridge at all
    target = bias_free_nc3(data.n_classes)
    n = len(data.y_test)
    disagree, errors = held_out_counts(h, n)
    return dict(held_nc4_count=f"{disagree:,} of {n:,}", held_err_count=f"{errors:,} of {n:,}",
                held_rests=f"{'only ' if errors < FEW_ERRORS else ''}{errors:,}",
                loss_ce_peak_note=peak_note(ce), nc1_fall=_nc1_fall(h),
                etf_end=etf, equinorm_end=h.last("equinorm"),
                nc3c_fall=at_zero_error(h, "nc3_centred") / h.last("nc3_centred"),
                nc3c_end=h.last("nc3_centred"), nc3_end=h.last("nc3"),
                nc3_target=target, nc3_over=h.last("nc3") / target,
                etf_zero=at_zero_error(h, "etf_distance"),
                nc4_end=_pct(h.last("nc4")), held_nc4=_pct(test["nc4"]),
                held_err=_pct(1 - h.last("test_acc")),
                **loss_numbers(h, ce), ls_share=_pct(split["deviation_share"]),
                ls_share_plain=_pct(plain["deviation_share"]),
                ls_head_norm=split["head_norm"], ls_plain_norm=plain["classifier_norm"],
                ex6_nc1_test=test["nc1"], ex6_nc1_train=h.last("nc1"),
                ex6_nc4_test=_pct(test["nc4"]), ex6_nc4_train=_pct(h.last("nc4")),
                ex6_etf_test=test["etf_distance"], ex6_etf_train=etf,
                ex6_acc=_pct(h.last("test_acc"), ".0f"))


FEW_ERRORS = 20  # under this many held-out errors the prose says "only"


def peak_note(ce: History) -> str:
    """How a run's NC1 gets from its lowest point after zero training error to its end, as the
    prose says it: "its highest since that low point" when the end is the peak, else the peak
    before the end ("after a peak of 1.161 at step 3,234, 0.96% above its end value", the peak
    to four figures so that the share follows from it and the end the sentence gives), so that
    no sentence reads a curve that turns down before the end as rising to it; a curve whose
    lowest point is its end says so (its "rise" is then 1)."""
    z = terminal_phase_start(ce)
    nc1 = np.asarray(ce["nc1"], float)
    i0 = ce.steps.index(z) if z is not None else 0
    low = i0 + int(np.nanargmin(nc1[i0:]))
    top = low + int(np.nanargmax(nc1[low:]))
    if low == len(nc1) - 1:
        return "that is, none: its lowest point is its end"
    if top == len(nc1) - 1 or not nc1[top] > nc1[-1]:
        return "its highest since that low point"
    return (f"after a peak of {plots.number(nc1[top], 4)} at step {ce.steps[top]:,}, "
            f"{_pct(nc1[top] / nc1[-1] - 1)} above its end value")


def simplex_numbers(recorder, history: History | None = None) -> dict:
    """Section 2's numbers: the smallest and largest cosine between two centred class means at
    the end of a run with snapshots (the simplex's is −1/(C−1)), and the two as the prose
    says them (``cos_range``: "between −0.41 and −0.25", or "all −0.33")."""
    # the snapshot's means are centred already
    cos = cosine_gram(recorder.snapshots[-1]["means"], centre=False).numpy()
    off = cos[~np.eye(len(cos), dtype=bool)]
    out = dict(cos_lo=off.min(), cos_hi=off.max(),
               cos_range=range_text(off.min(), off.max(), lambda v: f"{v:.2f}".replace("-", "−")))
    # what the 3-D picture cannot show: the part of each centred classifier row outside the
    # span of the class means (the smallest in-span fraction over rows, first and last snapshot)
    for key, snap in (("first", recorder.snapshots[0]), ("last", recorder.snapshots[-1])):
        w = snap["weight"] - snap["weight"].mean(0)
        out[f"span_{key}"] = _pct(float(in_span_fraction(w, snap["means"]).min()), ".0f")
    if history is not None:  # NC3 (W centred) in the full space, at the first evaluation and the end
        out.update(nc3c_first4=history["nc3_centred"][0], nc3c_last4=history.last("nc3_centred"))
    return out


def conditions_numbers(conditions: Conditions) -> dict:
    """Section 3's four runs in the numbers its "What to notice" quotes."""
    aw, an, gw, gn = (conditions.adamw_decay, conditions.adamw_none, conditions.gd_decay,
                      conditions.gd_none)
    every = (aw, an, gw, gn)
    return dict(gd_kept=_kept(gn), gd_decay_kept=_kept(gw),
                gd_loss_ratio=gw.last("train_loss") / gn.last("train_loss"),
                adam_loss_ratio=aw.last("train_loss") / an.last("train_loss"),
                gd_nc1_ratio=gw.last("nc1") / gn.last("nc1"),
                adam_nc1_ratio=an.last("nc1") / aw.last("nc1"), adam_kept=_kept(an),
                adam_decay_kept=_kept(aw),
                # how AdamW's decay leaves ‖D‖ (relative to its first value) at the end
                adam_decay_side="smaller" if _kept(aw) < _kept(an) else "larger",
                orth_start=aw["orthogonality"][0],
                orth_adam=aw.last("orthogonality"), orth_gd=gw.last("orthogonality"),
                orth_none_adam=an.last("orthogonality"), orth_none_gd=gn.last("orthogonality"),
                orth_bar=f"{ORTH_COS:g}",
                # the row's test, as the prose says it
                orth_reached=("reach" if ORTHOGONAL.test.passes(ORTHOGONAL.measure(dict(AdamW=aw, GD=gw)))
                              else "do not reach"),
                # the runs without decay against those with, optimizer by optimizer
                orth_none_side=_side(an.last("orthogonality") - aw.last("orthogonality"),
                                     gn.last("orthogonality") - gw.last("orthogonality")),
                cond_max=max(r.last("conditioning") for r in every),
                cond_peak=max(float(np.nanmax(np.asarray(r["conditioning"], float)))
                              for r in every),
                gd_lr=plots.number(gw.info["config"]["lr"], 2),
                gd_decay=_decay(gw), adam_decay=_decay(aw),
                adam_loss_end=aw.last("train_loss"),
                # GD with decay: when it reaches zero error, where its NC3 ends
                gd_decay_zero=("never reaches zero training error" if terminal_phase_start(gw)
                               is None else f"reaches zero training error {_zero_text(gw)}"),
                adam_zero=_zero_text(aw),
                gd_decay_nc3=gw.last("nc3"), gd_nc3_target=bias_free_nc3(_classes(gw)),
                **_nc3_side(gw.last("nc3"), bias_free_nc3(_classes(gw))))


def _classes(h: History) -> int:
    return int(h.info["config"]["n_classes"])


def _zero_text(h: History) -> str:
    """When a run first reaches zero training error, as the prose says it ("reaches zero
    training error at step 477", or "at no step")."""
    z = terminal_phase_start(h)
    return "at no step" if z is None else f"at step {z:,}"


def _nc3_side(value: float, target: float) -> dict:
    """Where a run's Papyan NC3 ends against the bias-free head's collapse value ``target``, as
    the prose says it: "below", "above" or "at" it (as the two print, three figures), and what
    that makes of its classifier."""
    at = plots.number(value, 3) == plots.number(target, 3)
    return dict(gd_nc3_side="at" if at else "below" if value < target else "above",
                gd_nc3_ending="so its classifier is at that collapse, not Papyan's" if at else
                "so its classifier is at neither that collapse nor Papyan's")


def _side(*differences: float) -> str:
    """How runs without decay end against those with, from each optimizer's difference of mean
    |cos| (without − with): "nearer orthogonal" when every one is below 0, "farther from
    orthogonal" when every one is above, "one nearer orthogonal and one farther" otherwise."""
    if all(d < 0 for d in differences):
        return "nearer orthogonal"
    if all(d > 0 for d in differences):
        return "farther from orthogonal"
    return "one nearer orthogonal and one farther"


def imbalance_numbers(result) -> dict:
    """Section 4's numbers: the run's, as its "What to notice" quotes them, and exercise 4's:
    the weight decay at which a class of 10 among 1,000 examples collapses to zero, for one and
    for three linear layers."""
    t = imbalance_trends(result)
    l1, l3 = (minority_collapse_threshold([990, 10], depth) for depth in (1, 3))
    return dict(ufm_err=_pct(t["ufm_error"]),
                ufm_angles=angle_range(*t["ufm_angles"], digits=1),
                net_angles=angle_range(*t["net_angles"], digits=0),
                slope_w=f"{t['slope_w']:+.3f}".replace("-", "−"),
                slope_h=f"{t['slope_h']:+.3f}".replace("-", "−"), net_tol=f"{IMB_NET_TOL:g}°",
                slope_bar_w=f"{IMB_SLOPE_W:g}", slope_bar_h=f"{IMB_SLOPE_H:g}".replace("-", "−"),
                against=f"{t['against_w'] + t['against_h']} of {2 * (len(result.counts) - 1)}",
                tie_tol=f"{TIE_REL:.0%}", ex4_l1=plots.number(l1, 2), ex4_l3=plots.number(l3, 2),
                ex4_ratio=plots.number(l1 / l3, 2))
