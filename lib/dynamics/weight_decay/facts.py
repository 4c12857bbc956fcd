"""Weight decay, section 4's facts: what the trained weights' spectra say, as the numbers the
prose glues (:func:`spectrum_numbers`) and the claims rows (:func:`spectrum_claims`), each
read from :func:`~.experiments.run_spectrum`'s runs. :mod:`.claims` gathers them with the
other sections'. The tail of a spectrum is :func:`~.spectra.tail_fit`'s: a power law is
claimed only where it beats an exponential tail and has no gap the law cannot explain (a few
spikes over a collapsed bulk beat the exponential too)."""
from __future__ import annotations

import numpy as np

from .. import evidence, plots
from .spectra import TAIL_P, tail_fit

__all__ = ["HEAVY", "spectrum_claims", "spectrum_numbers"]

_SPEC = "Scaling Laws and Spectra of Shallow Neural Networks in the Feature Learning Regime"
_MM = "Implicit Self-Regularization in Deep Neural Networks"
_OWN = "this page's observation (no paper claims it)"
HEAVY = 2.0  # a tail exponent below this: heavier than Martin & Mahoney's 2 to 4


def _claim(label, measure, op, threshold, name):
    return evidence.Claim(label, _MM, measure=measure, test=evidence.Test(op, threshold, name),
                          control="the same matrix at initialization", window="its tail",
                          asserted=False, fmt=lambda v: _p(v))


# The four tests a tail must pass to be read as a heavy power law (spectra.tail_fit), each a part
# of section 4's tail row, so that the row says which test a trained matrix fails.
TAIL_TESTS = {
    "power law over an exponential tail (p, 1 where the exponential wins)": _claim(
        "beats the exponential", lambda f: f["p"] if f["loglik_ratio"] > 0 else 1.0, "<",
        TAIL_P, "TAIL_P"),
    "no exponential cutoff (the nested test's p)": _claim(
        "no cutoff", lambda f: f["cutoff_p"], ">=", TAIL_P, "TAIL_P"),
    "no gap in the tail (the largest gap's p)": _claim(
        "no gap", lambda f: f["gap_p"], ">=", TAIL_P, "TAIL_P"),
    f"α below {HEAVY:g}": _claim("heavy", lambda f: f["alpha"], "<", HEAVY, "HEAVY")}


def _n(x, digits: int = 3) -> str:
    return plots.number(x, digits, missing="n/a")


def _fmt(x, digits: int = 2) -> str:
    return plots.number(x, digits, missing="n/a")


def _spectrum_checks(sp: dict) -> dict | None:
    """One seed's section-4 run, the square hidden matrix ``hidden.1`` read without and with
    decay and at initialization: its stats (``a``: no decay, ``b``: decay), its tail fit at
    initialization (``init``), whether the norms without decay still grow in the second half
    (``grows``) and whether decay leaves every matrix smaller (``shrink``)."""
    (w0, r0), (w1, r1) = list(sp["runs"].items())[0], list(sp["runs"].items())[-1]
    name = "hidden.1" if "hidden.1" in r0["stats"] else next(iter(r0["stats"]), None)
    if name is None or name not in r1["stats"]:
        return None
    h = r0["history"]
    half = int(np.searchsorted(np.asarray(h.steps), h.steps[-1] / 2))
    return dict(name=name, w0=float(w0), w1=float(w1), a=r0["stats"][name], b=r1["stats"][name],
                init=tail_fit(r0["init"][name]), fit=tail_fit(r1["final"][name]), r0=r0, r1=r1,
                grows=all(h[f"norm {n}"][-1] > h[f"norm {n}"][half] for n in r0["stats"]),
                shrink=all(r1["stats"][n]["frobenius"] < r0["stats"][n]["frobenius"]
                           for n in r0["stats"] if n in r1["stats"]))


def _p(x) -> str:
    x = float(x)
    return "n/a" if not np.isfinite(x) else (f"{x:.1e}" if x < 1e-3 else _n(x, 2))


def _alpha(stats: dict) -> str:
    """A tail fit as the claims print it: alpha, and "no power law" where the fit rejects it."""
    return _n(stats["tail_alpha"], 2) + ("" if stats["tail_power_law"] else " (no power law)")


def spectrum_claims(spectrum: dict) -> list[dict]:
    """Section 4's rows, each judged on every seed of ``spectrum`` (``{seed: run_spectrum}``)."""
    seeds = list(spectrum)
    checks = {s: _spectrum_checks(sp) for s, sp in spectrum.items()}
    if not all(c is not None for c in checks.values()):
        return []
    c0 = checks[seeds[0]]
    name, w0, w1 = c0["name"], c0["w0"], c0["w1"]
    rows = []
    frob = {s: c["b"]["frobenius"] / c["a"]["frobenius"] for s, c in checks.items()}
    text, v = plots.judged(frob, {s: c["grows"] and c["shrink"] for s, c in checks.items()},
                           lambda x: _n(x, 2) + "×")
    rows.append(plots.claim(
        "without decay the norms still grow in the second half of training; decay leaves every "
        "matrix smaller", _OWN,
        f"{name}: Frobenius norm with decay over without, {text}", v,
        control=f"the run without decay (λ {_n(w0, 2)}), its norms at half time",
        window="every matrix: still growing without decay, smaller with it", seeds=seeds))
    top = {s: (c["b"]["spectral"] / c["a"]["spectral"]) / (c["b"]["frobenius"] / c["a"]["frobenius"])
           for s, c in checks.items()}
    text, v = plots.judged(top, {s: top[s] > 1 and c["b"]["stable_rank"] < c["a"]["stable_rank"]
                                 and c["b"]["effective_rank"] < c["a"]["effective_rank"]
                                 for s, c in checks.items()}, lambda x: _n(x, 2) + "×")
    rows.append(plots.claim(
        "decay shrinks the top singular value less than the Frobenius norm: the stable and "
        "effective ranks fall", _OWN,
        f"{name}, λ {_n(w0, 2)} → {_n(w1, 2)}: the top singular value's ratio over the "
        f"Frobenius norm's, {text}; stable rank {plots.spread({s: c['a']['stable_rank'] for s, c in checks.items()}, _fmt)}"
        f" → {plots.spread({s: c['b']['stable_rank'] for s, c in checks.items()}, _fmt)}", v,
        control=f"the run without decay (λ {_n(w0, 2)})",
        window="ratio above 1; both ranks lower, every seed", seeds=seeds))
    fits = {s: c["fit"] for s, c in checks.items()}
    init = {s: c["init"] for s, c in checks.items()}
    parts = {f"{label}:": evidence.judge(claim, fits, init) for label, claim in TAIL_TESTS.items()}
    rows.append(evidence.joint(
        f"with decay the spectrum of the trained matrix has a power-law tail with α below {HEAVY:g} "
        "(a heavy-tailed phase), which the random initialization does not have", _MM, parts,
        control="the same matrix at initialization, each test alike (it must fail the first)",
        window=f"{name}'s eigenvalues above the fitted x_min, with decay (λ {_n(w1, 2)}); every "
               "seed; a power law only where all four parts hold", asserted=False,
        note="tail α with decay "
             + plots.spread({s: f["alpha"] for s, f in fits.items()}, _fmt)))
    gain = {s: c["r1"]["test_acc"] - c["r0"]["test_acc"] for s, c in checks.items()}
    tails = sum(bool(c["b"]["tail_power_law"]) for c in checks.values())
    text, v = plots.judged(gain, {s: gain[s] > 0 and c["b"]["tail_power_law"]
                                  for s, c in checks.items()}, lambda x: f"{x:+.3f}")
    if tails == 0:  # no run here has the tail the link is about: these runs cannot test it
        text += ("; with decay no seed's matrix has a power-law tail, so these runs cannot "
                 "test the link either way")
        v = "does not discriminate"
    rows.append(plots.claim(
        "power-law tails in the weight spectrum come with better generalization", _SPEC,
        f"test accuracy with decay minus without: {text}", v, asserted=False,
        control=f"the run without decay (λ {_n(w0, 2)})",
        window="a gain on every seed, with a power-law tail", seeds=seeds))
    return rows


def _fails(fit: dict) -> str:
    """Which of the four tail tests (:data:`TAIL_TESTS`) a fit fails, in words ("none": it
    is a heavy power-law tail)."""
    names = {"beats the exponential": "the exponential fits as well",
             "no cutoff": "a cutoff fits significantly better",
             "no gap": "its tail has a gap the law cannot explain",
             "heavy": f"α is not below {HEAVY:g}"}
    out = [names[c.statement] for c in TAIL_TESTS.values() if not c.test.passes(c.measure(fit))]
    return "; ".join(out) or "none"


def spectrum_numbers(spectrum: dict) -> dict:
    """Section 4's numbers: test and training accuracy without and with decay, and the tail
    fit of the square hidden matrix at initialization, without and with decay."""
    runs = list(spectrum["runs"].values())
    r0, r1 = runs[0], runs[-1]
    c = _spectrum_checks(spectrum)
    out = dict(wd_spec_test=f"{_fmt(r0['test_acc'], 3)} → {_fmt(r1['test_acc'], 3)}",
               wd_spec_train=f"{_fmt(r0['train_acc'], 3)} → {_fmt(r1['train_acc'], 3)}",
               wd_spec_verdict=plots.MARKS[spectrum_claims({0: spectrum})[-1]["reproduced"]],
               wd_spec_phrase="better" if r1["test_acc"] > r0["test_acc"] else "worse",
               wd_spec_tail_verdict=plots.MARKS[spectrum_claims({0: spectrum})[2]["reproduced"]]
               if _spectrum_checks(spectrum) is not None else "n/a",
               wd_spec_tail_fails="n/a")
    if c is None:  # a run that diverged: nothing to read
        return {**out, **{k: "n/a" for k in ("wd_spec_alpha0", "wd_spec_alpha1", "wd_spec_tail1",
                                             "wd_spec_ratio_init", "wd_spec_ratio0",
                                             "wd_spec_ratio1", "wd_spec_gap_p", "wd_spec_spikes",
                                             "wd_spec_cutoff_p", "wd_spec_exp_p",
                                             "wd_spec_top", "wd_spec_median", "wd_spec_srank",
                                             "wd_spec_frob0", "wd_spec_norms1")}}
    x1 = np.sort(np.asarray(r1["final"][c["name"]], dtype=float) ** 2)[::-1]
    frob = {n: (float(np.sqrt((np.asarray(sv, dtype=float) ** 2).sum())),
                float(np.sqrt((np.asarray(r1["final"][n], dtype=float) ** 2).sum())))
            for n, sv in r1["init"].items()}
    h = r1["history"]
    half = int(np.searchsorted(np.asarray(h.steps), h.steps[-1] / 2))
    grow = {n: h[f"norm {n}"][-1] > h[f"norm {n}"][half] for n in frob}
    init0 = float(np.sqrt((np.asarray(r0["init"][c["name"]], dtype=float) ** 2).sum()))
    return {**out, "wd_spec_alpha0": _alpha(c["a"]), "wd_spec_alpha1": _alpha(c["b"]),
            "wd_spec_tail1": str(tail_fit(r1["final"][c["name"]])["n_tail"]),
            "wd_spec_ratio_init": _fmt(c["init"]["loglik_ratio"]),
            "wd_spec_ratio0": _fmt(c["a"]["tail_ratio"]), "wd_spec_ratio1": _fmt(c["b"]["tail_ratio"]),
            "wd_spec_gap_p": _p(c["b"]["tail_gap_p"]), "wd_spec_cutoff_p": _p(c["fit"]["cutoff_p"]),
            "wd_spec_exp_p": _p(c["fit"]["p"]),
            "wd_spec_tail_fails": _fails(c["fit"]), "wd_spec_spikes": str(c["b"]["tail_spikes"]),
            "wd_spec_top": ", ".join(_fmt(v, 2) for v in x1[:5]),
            "wd_spec_median": _fmt(float(np.median(x1)), 2),
            "wd_spec_srank": f"{_fmt(c['a']['stable_rank'], 3)} → {_fmt(c['b']['stable_rank'], 3)}",
            "wd_spec_frob0": f"{_fmt(init0, 3)} → {_fmt(c['a']['frobenius'], 3)}",
            "wd_spec_norms1": "; ".join(
                f"{n} {_fmt(a, 3)} → {_fmt(b, 3)}"
                + (", still growing in the second half" if grow[n] else "")
                for n, (a, b) in frob.items())}
