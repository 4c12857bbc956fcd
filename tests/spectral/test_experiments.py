"""dynamics.spectral.experiments: the runners, and the chapter's claims asserted on the data
its figures show (the smoke runs, several seeds; the precomputed cpu files in data/), so the
prose cannot drift from the figures."""
import functools
import json
from dataclasses import replace

import pytest
import torch

from dynamics import results
from dynamics.spectral import claims as C
from dynamics.spectral import experiments as E
from dynamics.spectral import facts as FA
from dynamics.spectral import roles as R
from dynamics.spectral import science as S
from dynamics.train import History
from dynamics_ops.precompute import Runner


def loaded(name):
    """A precomputed file of the chapter, read as its record (``E.RECORDS``)."""
    return results.load(name, as_=E.RECORDS[name])[0]

SEEDS = [0, 1, 2]


# ----------------------------------------------------------------- Muon = torch's Muon


def test_muon_agreement_is_exact():
    """The claims row "The teaching Muon reproduces torch.optim.Muon" (at most 1e-5) holds
    with a margin; without Nesterov and decay the two agree as well."""
    assert E.muon_agreement(0) <= 1e-6
    assert E.muon_agreement(1, nesterov=False, weight_decay=0.0) <= 1e-6
    for seed in SEEDS:
        assert verdict_of(claim_rows(seed), "The teaching Muon reproduces") == "yes"


# ----------------------------------------------------------------- Newton–Schulz vs SVD


def test_time_orthogonalization():
    rows = E.time_orthogonalization([16, 32], repeats=1).rows
    assert [r.n for r in rows] == [16, 32]
    assert all(r.ns_float32_s > 0 and r.svd_s > 0 and r.max_sigma_error < 1 for r in rows)


def _renamed(payload: dict, old: str, new: str) -> dict:
    return {new if k == old else k: v for k, v in payload.items()}


def test_the_page_time_runners_return_their_records():
    """Each runner whose result a claims row or a glued fact reads returns its record (the
    readers name the fields they read), and a payload with a field renamed is refused, naming
    the field."""
    timing = E.time_orthogonalization([16], repeats=1)
    assert isinstance(timing, E.Timing) and isinstance(timing.rows[0], E.TimingRow)
    bands = E.run_bands(0, rows=32, cols=16, steps=5)
    assert isinstance(bands, E.Bands) and isinstance(bands.quintic, E.Band) and bands.quintic.k == list(range(6))
    width = E.run_width(S.WidthConfig.for_profile("smoke", widths=[16, 32], seeds=1))
    cfg = S.PracticeConfig.for_profile("smoke", steps=10, muon_lrs=[0.05], adamw_lrs=[0.01], momentum_lrs=[0.1])
    practice = E.run_practice(cfg, teaching_fp32=False, bars=False)
    batch = E.run_memory_batch(S.MemoryConfig.for_profile("smoke", seeds=1, batch_sizes=[4, 64]))
    roles = E.run_roles(0, draws=5)
    assert isinstance(roles.by_seed[0], E.StepTable)
    for rec, old in ((timing.rows[0], "svd_s"), (bands.quintic, "lo"), (width, "change"),
                     (practice, "timed"), (batch, "recall"), (roles.by_seed[0], "gain")):
        assert isinstance(rec, E.Practice) or type(rec).of(rec.to_dict()) == rec  # round trip
        with pytest.raises(ValueError, match=f"no field {old}"):
            type(rec).of(_renamed(rec.to_dict(), old, old + "_renamed"))
    with pytest.raises(ValueError, match="no field gain"):
        E.Roles.of({0: _renamed(roles.by_seed[0].to_dict(), "gain", "gains")})


def test_timing_sizes_in_a_dry_run(monkeypatch):
    assert E.timing_sizes("gpu")[-1] == 8192
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "3")
    assert E.timing_sizes("gpu") == [64] and E.timing_sizes("smoke") == [64, 256]


def test_what_the_timing_figure_shows():
    """On the CPU that made data/spectral_timing.json, five Newton–Schulz steps leave a relative
    error from U Vᵀ of about 20% at every size and max|σ − 1| between 0.7 and 1 (properties of
    the matrices, not of the clock). Its seconds are one measurement on a shared machine, which a
    second one can move: the claims row shows them, with the load it measured, and no test
    holds them to a value."""
    rows = loaded("spectral_timing").rows
    assert rows[0].device == "cpu"
    for r in rows:
        assert 0.15 <= r.rel_error <= 0.3 and 0.7 <= r.max_sigma_error <= 1.0
        assert r.svd_cpu_s > 0 and r.ns_float32_cpu_s > 0


# ----------------------------------------------------------------- one step at several widths


@functools.cache
def width(seed):
    return E.run_width(S.WidthConfig.for_profile("smoke", seed=seed))


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_a_spectrally_sized_step_moves_a_layer_the_same_at_every_width(seed):
    """Section 1: per unit learning rate, Muon's first step moves the hidden layer's output
    by about the same amount at every width, SGD's grows about √width-fold and Adam's about
    width-fold; no step moves it by more than its RMS→RMS norm (the claims rows' verdicts:
    their thresholds live in claims.page_claims)."""
    r = width(seed)
    assert len(r.widths) >= 3 and set(r.change) == {"muon", "sgd", "adam"}
    rows = claim_rows(seed)
    assert verdict_of(rows, "A step of fixed spectral") == "yes"
    assert verdict_of(rows, "Adam's first step grows") == "yes"


# ----------------------------------------------------------------- Muon in practice


@functools.cache
def practice(seed, optimizers=("adamw", "muon", "momentum"), teaching_fp32=True):
    cfg = S.PracticeConfig.for_profile("smoke", seed=seed)
    return E.run_practice(cfg, optimizers=optimizers, teaching_fp32=teaching_fp32, bars=False)


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_muon_reaches_target_loss_in_fewer_steps_than_adamw(seed):
    """Section 3 at smoke scale: Muon reaches the target in a fraction of AdamW's steps
    (measured 3.0-3.6× over seeds 0-5; SGD with momentum is no longer asserted slowest: at cpu
    scale it trails AdamW by one evaluation, 260 against 250 steps), and the float32 teaching
    Muon reaches the target within a quarter below and a third above torch's Muon (33-42
    against 36-39 steps over seeds 0-5, with and without
    ATEN_CPU_CAPABILITY=default). Their mini-batch loss curves are not compared point by
    point: bfloat16 against float32 rounding, amplified by training, moved them apart by up
    to 0.09 here and 0.16 on an AVX2 machine, about a seed's spread; the exact agreement of
    the two implementations on the same gradients is test_muon_agreement_is_exact's."""
    summ = E.practice_summary(practice(seed))
    assert summ["muon"]["steps"] is not None and summ["adamw"]["steps"] is not None
    assert FA.practice_numbers(practice(seed))["adamw_over_muon"] > C.HALF
    rows = claim_rows(seed)
    assert verdict_of(rows, "Per step Muon reaches") == "yes"  # the sweep file's row
    # one seed and no noise floor: the engine cannot say more than "within noise" (shown, not
    # asserted); its control, AdamW's steps in the teaching Muon's place, fails the range
    assert verdict_of(rows, "The float32 teaching Muon") == "within noise"
    fp32 = next(r for r in rows if r["claim"].startswith("The float32 teaching Muon"))["evidence"][0]
    assert all(v < 0 for v in fp32["control"].values()) and not C.FP32_MATCH.asserted


def test_what_the_precomputed_sweeps_show():
    """The cpu sweeps in data/spectral_practice.json (also the book's cpu run at seed 0):
    Muon reaches the target at every rate swept, AdamW and SGD at two of four (the grids differ
    in width: the claims row compares the width of each range that reaches it); at its best
    rate Muon needs fewer than half of AdamW's steps, and SGD the most."""
    sweeps, target, _, prov = E.load_practice()
    assert prov["profile"] == "cpu"
    assert E.rates_reaching(sweeps, target) == {"adamw": (2, 4), "muon": (4, 4), "momentum": (2, 4)}
    best = {k: min(s for s in (E.steps_to(h, target) for h in runs.values()) if s is not None)
            for k, runs in sweeps.items()}
    assert 2 * best["muon"] <= best["adamw"] < best["momentum"]


def test_best_lr_and_steps_to():
    def hist(losses, diverged=None):
        h = History(diverged_at=diverged)
        for i, v in enumerate(losses):
            h.append(10 * i, train_loss=v)
        return h
    runs = {0.1: hist([2, 1.5, 0.9, 0.5]), 0.3: hist([2, 0.8, 0.6, 0.4]), 1.0: hist([2, 0.7], 15)}
    assert E.steps_to(runs[0.1], 1.0) == 20
    assert E.best_lr({k: v for k, v in runs.items() if k != 1.0}, 1.0) == 0.3
    assert E.best_lr({0.1: hist([2, 1.9]), 0.3: hist([2, 1.5])}, 1.0) == 0.3  # none reach: lowest final
    assert E.best_lr(runs, 0.75) == 0.3  # the diverged run ranks last
    assert E.first_at_or_below(runs[0.1], 0.9) == 20
    assert E.rates_reaching({"x": runs}, 1.0) == {"x": (3, 3)}


def test_practice_runs_every_optimizer_and_the_float32_teaching_muon():
    cfg = S.PracticeConfig.for_profile("smoke", steps=20, muon_lrs=[0.05], adamw_lrs=[0.01, 0.03],
                                       momentum_lrs=[0.1])
    r = E.run_practice(cfg, bars=False)
    assert r.best["adamw"] in (0.01, 0.03) and set(r.sweeps) == {"adamw", "momentum", "muon"}
    summary = E.practice_summary(r)
    assert set(summary) == {"adamw", "momentum", "muon", "muon_fp32"}
    assert summary["muon_fp32"]["lr"] == 0.05 and "seconds" not in summary["muon_fp32"]


# ----------------------------------------------------------------- the associative memory


@functools.cache
def memory(seed, profile="smoke"):
    return E.run_memory(S.MemoryConfig.for_profile(profile, seed=seed))


# At the smoke profile a row the engine judges on each of three draws of a small problem may
# clear its threshold by less than the draws' spread ("within noise") or miss it on one draw
# ("partly"); it must never say "no" or "does not discriminate". The cpu tests below
# (test_memory_sentences_hold_at_cpu_scale, test_critical_batch_at_cpu_scale) and the strict
# cpu build hold those rows to "yes".
SMOKE_DRAWS = ("yes", "within noise", "partly")

MEMORY_SENTENCES = ("Up to N = d Muon and Newton", "From N = 2d one Muon step")
DEEPER_ROW = "At N = 4d SGD stores only the head"  # no control: never yes (shown, not asserted)


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_one_muon_step_stores_more_associations_than_sgd(seed):
    """Section 4's reading of the memory figures (α = 1), the claims rows of
    claims.memory_claims (their thresholds live there): up to N = d Muon and Newton store
    almost every pair while SGD loses most; past N = d one Muon step stores several times as
    many pairs as SGD, at least 3/4 of Newton's from 2d, as many as Newton from 8d on; at
    N = 4d SGD stores only the head of the distribution, Muon reaches far further."""
    rows = C.memory_claims(memory(seed))
    for start in MEMORY_SENTENCES:
        assert verdict_of(rows, start) in SMOKE_DRAWS, start


def test_memory_sentences_hold_at_cpu_scale():
    """data/spectral_memory.json at α = 1 is the book's cpu run (same config and seed)."""
    memory_file, prov = results.load("spectral_memory", as_=E.MemoryFile)
    assert prov["profile"] == "cpu" and prov["config"]["seed"] == 0
    rows = C.memory_claims(memory_file.by_alpha["1"])
    for start in MEMORY_SENTENCES:
        assert verdict_of(rows, start) == "yes", start
    assert verdict_of(rows, DEEPER_ROW) == "does not discriminate"


def test_the_memory_rows_say_no_when_muon_stores_no_more_than_sgd():
    """The rows can fail: with SGD's recall in Muon's place (and Muon's in SGD's) each of the
    memory sentences on the stored fractions turns to ✗ (the tail row makes each draw's step
    again: its control, SGD in Muon's place, is the engine's)."""
    m = memory(0)
    swapped = replace(m, fraction={**m.fraction, "muon": m.fraction["sgd"], "sgd": m.fraction["muon"]},
                      by_rank={**m.by_rank, "muon": m.by_rank["sgd"], "sgd": m.by_rank["muon"]},
                      by_draw={**m.by_draw, "muon": m.by_draw["sgd"], "sgd": m.by_draw["muon"]})
    rows = C.memory_claims(swapped)
    for start in MEMORY_SENTENCES[:2]:
        assert verdict_of(rows, start) == "no", start


def test_what_the_alpha_slider_shows():
    """The steeper the power law, the fewer pairs SGD stores at N = d while Newton stores them
    all; at α = 2 Muon's five Newton–Schulz steps fall well short of Newton while still storing
    several times what SGD does, and the exact UVᵀ (the control the file lacks, computed on the
    same pairs) stores as many as Newton at every α: the rows on data/spectral_memory.json
    (their thresholds live in claims._precomputed_rows) hold on every draw of the file, and
    say so with the draws' spread; each one's control fails it."""
    by_alpha = loaded("spectral_memory").by_alpha
    assert list(by_alpha) == ["0.5", "1", "1.5", "2"] and by_alpha["1"].draws == [0, 1, 2, 3, 4]
    rows = C.published_claims()
    for start in ("At N = d the steeper the power law", "At N = d and the steepest α",
                  "The exact UVᵀ, the orthogonalization"):
        row = next(r for r in rows if r["claim"].startswith(start))
        assert row["reproduced"] == "yes" and row["seeds"] == [0, 1, 2, 3, 4], start
        assert "median" in row["measured here"], start
    exact = FA.alpha_exact(by_alpha)
    assert all(d[2.0] >= 0.95 for d in exact.values())  # Newton stores all of them there


@pytest.mark.parametrize("profile", ["smoke", "cpu"])
def test_the_equal_frequency_exercise(profile):
    """Exercise 3's answer: at α = 0 Muon's lead is gone (it is never more than 0.05 ahead of
    SGD, and SGD stores more once N >= 4d), while Newton's method still stores the most."""
    r = E.run_memory(S.MemoryConfig.for_profile(profile, alpha=0.0, seeds=2))
    f = r.fraction
    assert all(m <= s + 0.05 for s, m in zip(f["sgd"], f["muon"]))
    assert all(s > m for s, m, ratio in zip(f["sgd"], f["muon"], r.ratios) if ratio >= 4)
    assert all(n >= max(s, m) - 1e-9 for n, s, m in zip(f["newton"], f["sgd"], f["muon"]))


@functools.cache
def batch(seed, profile="smoke"):
    return E.run_memory_batch(S.MemoryConfig.for_profile(profile, seed=seed))


BATCH_ROWS = ("Muon saturates at a critical batch", "SGD's recall peaks at a middle batch",
              "Below SGD's critical batch SGD and Muon tie", "From Muon's critical batch on")


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_muon_saturates_at_a_larger_critical_batch(seed):
    """Section 4, batch figure: SGD reaches 90% of its full-gradient recall at a batch of a
    few dozen, then overshoots it (its best batch beats the full gradient by at least 1.3×)
    and falls back; Muon keeps improving to a batch at least 4× larger and does not
    overshoot; below SGD's critical batch the two tie (within a third of what the larger
    stores); from Muon's
    critical batch on Muon stores at least 3× SGD's pairs (claims.batch_claims, each row's
    control run through its own test)."""
    r = batch(seed)
    assert E.critical_batch(r, "sgd") <= 64  # exercise 5: "a batch of a few dozen"
    rows = claim_rows(seed)
    for start in BATCH_ROWS:  # the shown rows (the critical batch, the overshoot) may not discriminate
        row = next(x for x in rows if x["claim"].startswith(start))
        shown = () if row["asserted"] else ("does not discriminate",)
        assert row["reproduced"] in SMOKE_DRAWS + shown, start
    per = FA.batch_facts(r)["by_draw"]
    assert all(p["critical"]["muon"] >= 4 * p["critical"]["sgd"] for p in per.values())
    mean = FA.batch_facts(r)["mean"]
    assert mean["overshoot"]["sgd"] >= 1.3 > mean["overshoot"]["muon"]
    assert mean["peak"]["sgd"] > r.recall["sgd"][-1]  # it rises, then falls


def test_critical_batch_at_cpu_scale():
    """The cpu run of the batch figure (d = 128, seeds 0-4): SGD saturates at 32, Muon at 1024;
    SGD's recall peaks near B = 256 at about 1.5× its full-gradient recall (0.080 against
    0.052 of the pairs) and falls back, on every draw (at least 1.3×), while Muon's best batch
    is within 6% of its full gradient; every asserted batch row holds on every draw."""
    r = batch(0, "cpu")
    assert E.critical_batch(r, "sgd") <= 64 and E.critical_batch(r, "muon") >= 8 * E.critical_batch(r, "sgd")
    per = FA.batch_facts(r)["by_draw"]
    assert len(per) == 5 and all(p["overshoot"]["sgd"] >= 1.3 for p in per.values())
    assert all(p["overshoot"]["muon"] <= 1.1 for p in per.values())
    rows = C.batch_claims(r)
    assert all(row["reproduced"] == "yes" for row in rows if row["asserted"])
    # the overshoot clears 1.3x on every draw but by less than the draws' spread: shown, not
    # asserted (section 4 glues its verdict)
    assert verdict_of(rows, "SGD's recall peaks") == "within noise"
    # the critical batch's control misses 4x by its own spread (test_the_tie_and_band_rows_can_say_no)
    assert verdict_of(rows, "Muon saturates") == "does not discriminate"
    assert [r["claim"][:20] for r in rows if not r["asserted"]] == [s[:20] for s in BATCH_ROWS[:2]]


def test_sgds_overshoot_comes_from_the_batch_counts():
    """Why a batch beats the full gradient for SGD: a batch weighs each drawn pair by its
    count, so a rare pair drawn once weighs 1/B, more than its frequency (a flatter weighting,
    the way Muon goes all the way). The same drawn pairs at their true frequencies never beat
    the full gradient; at their counts they do, by a third or more at some batch."""
    n, d = 256, 64
    counted, true = [], []
    for s in range(3):
        keys, values, freq = S.memory_task(n, d, 1.0, s)
        full = float(S.recovered(S.one_step("sgd", keys, values, freq), keys, values).double().mean())
        gen = torch.Generator().manual_seed(10_000 + s)
        best_c = best_t = 0.0
        for b in (32, 64, 128, 256):
            draws = torch.multinomial(freq, b, replacement=True, generator=gen)
            counts = torch.bincount(draws, minlength=n).to(keys)
            for w, keep in ((counts / b, "c"), (freq * (counts > 0), "t")):
                r = float(S.recovered(-S.memory_gradient(keys, values, w), keys, values).double().mean())
                if keep == "c":
                    best_c = max(best_c, r)
                else:
                    best_t = max(best_t, r)
        counted.append(best_c / full)
        true.append(best_t / full)
    assert max(true) <= 1.0 + 1e-9 and min(counted) >= 1.3, (true, counted)


# ----------------------------------------------------------------- spectral shaping


@functools.cache
def shaping(seed):
    return E.run_shaping(S.ShapingConfig.for_profile("smoke", seed=seed), bars=False)


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_spectral_shaping_early_and_late(seed):
    """Section 5's reading on the smoke run (claims.shaping_claims, facts.shaping_order):
    early (step 8) a positive p lowest and the most negative highest, Muon in between; at the
    end the most negative p lowest and the largest highest; the schedule ends below Muon; its
    row: the least fixed p's final loss over the schedule's (control: Muon, p = 0, in its place,
    against the other fixed p)."""
    run = shaping(seed)
    rows = C.shaping_claims(run, seed)
    # one run, judged against its own wobble (shown, not asserted): the order holds, by more
    # than the wobble or not
    assert verdict_of(rows, "Positive p helps early") in ("yes", "within noise")
    fin = {k: E.reference_loss(h) for k, h in run.runs.items() if k != E.DECAYED}
    fixed, part = ({k: v for k, v in fin.items() if k.startswith("p = ")},
                   next(r for r in rows if r["claim"] == C.SCHED_BELOW.statement)["evidence"][0])
    assert part["treatment"][seed] == pytest.approx(min(fixed.values()) / fin[run.schedule])
    assert part["control"][seed] == pytest.approx(
        min(v for k, v in fixed.items() if k != "p = 0") / fixed["p = 0"])
    assert not any(r["asserted"] for r in rows)
    assert FA.shaping_facts(shaping(seed), loaded("spectral_shaping").by_lr)["sched_end"] == "ends below"


def test_spectral_shaping_sentences_hold_at_cpu_scale():
    """data/spectral_shaping.json at lr 0.05 holds the book's cpu experiment (seed 0's runs,
    the slider's) and every seed's losses: the order row holds on each of seeds 0, 1, 2, and the
    schedule's own row ends 2.0x-2.4x below every fixed p while its control, Muon, fails (a fixed
    negative p ends below it): yes, shown."""
    by_lr, prov = E.load_shaping()
    assert prov["profile"] == "cpu" and prov["config"]["lr"] == 0.05 and prov["config"]["seed"] == 0
    assert prov["config"]["claim_seeds"] == 3 and set(by_lr["0.05"].by_seed) == {"0", "1", "2"}
    row = next(r for r in C.published_claims() if r["claim"].startswith("At the first evaluation"))
    # the orders hold, and the row holds those two parts only (one claim per row)
    parts = {e["label"]: e for e in row["evidence"]}
    assert set(parts) == {"early:", "late:"}
    assert parts["early:"]["verdict"] == parts["late:"]["verdict"] == row["reproduced"] == "yes"
    assert row["seeds"] == [0, 1, 2]
    # the schedule's own row: 2.0x-2.4x below every fixed p; Muon in its place fails (p = -0.5
    # ends below it: 0.42x-0.44x)
    (sched_row,) = [r for r in C.published_claims() if r["claim"].startswith("On the file at lr 0.05, the schedule")]
    (sched,) = sched_row["evidence"]
    assert min(sched["treatment"].values()) > 2 and max(sched["control"].values()) < 1
    assert sched_row["reproduced"] == "yes" and not sched_row["asserted"]
    # shown, not asserted: "early" is one evaluation at one rate, and the controls (each order
    # at the other end) do not test the constant-rate confound
    assert not row["asserted"]
    assert "median" in row["measured here"]  # the seeds' spread, not one seed's value


def test_what_the_shaping_slider_shows():
    """On data/spectral_shaping.json, on each of three seeds, each at its best rate on the grid
    a fixed p = -0.5 ends below Muon, whose best is the grid's lowest rate (0.02: the grid stops
    there); at the two higher rates the schedule ends lowest of all, at the lowest
    p = -0.5 ends at or within 20% of it on two of the three seeds: with the file made again by
    the current code (28 November), seed 1's p = -0.5 ends 1.26x the schedule at the lowest
    rate, so that row is shown, not asserted, and the page says "on this seed"."""
    by_lr, _ = E.load_shaping()
    assert list(by_lr) == ["0.02", "0.05", "0.1"]
    rows = C.published_claims()
    assert verdict_of(rows, "Each at its best rate on the grid") == "yes"
    sched = next(r for r in rows if r["claim"].startswith("At all but the lowest rate the schedule"))
    # shown, not asserted: at the lowest rate p = -0.5 sits near the 20% slack on some seed
    # (1.26x on seed 1 in the file of 2026-11-28: partly; 1.20x in that of 2026-11-29: every
    # seed passes, by less than the seeds' spread: within noise)
    assert sched["reproduced"] in ("partly", "within noise") and not sched["asserted"]
    ratios = [v["p = -0.5"]["final"] / min(x["final"] for k, x in v.items() if not k.startswith("p = "))
              for v in by_lr["0.02"].by_seed.values()]
    assert (sched["reproduced"] == "partly") == (max(ratios) > C.SLIDER_SLACK)


def test_the_published_rows_can_say_no():
    """The rows on the precomputed files fail when the data contradict them: with Muon's and
    p = -0.5's losses swapped on every seed, and Muon's sweep counts given to AdamW, the
    shaping and the sweep rows turn to ✗ (not ◐); swapped on one seed only, they say so."""
    timing, by_alpha = loaded("spectral_timing"), loaded("spectral_memory").by_alpha
    swept, by_lr = loaded("spectral_practice"), loaded("spectral_shaping").by_lr

    def swap(runs):
        return {**runs, "p = 0": runs["p = -0.5"], "p = -0.5": runs["p = 0"]}
    bad_lr = {lr: replace(r, by_seed={s: swap(v) for s, v in r.by_seed.items()})
              for lr, r in by_lr.items()}
    bad_sweep = replace(swept, reached={s: {**r, "adamw": r["muon"], "muon": r["adamw"]}
                                        for s, r in swept.reached.items()})
    sgd_sweep = replace(swept, reached={s: {**r, "momentum": r["muon"], "muon": r["momentum"]}
                                        for s, r in swept.reached.items()})
    assert verdict_of(C._precomputed_rows(timing, sgd_sweep, by_alpha, by_lr),
                      "Muon reaches the target over a wider") == "no"
    rows = C._precomputed_rows(timing, bad_sweep, by_alpha, bad_lr)
    for start in ("Muon reaches the target over a wider", "Each at its best rate on the grid",
                  "At the first evaluation"):
        assert verdict_of(rows, start) == "no", start
    # the schedule's row: swapping Muon and p = -0.5 leaves its measure as it was, but Muon now
    # ends below every other fixed p, so its control passes too
    assert verdict_of(rows, "On the file at lr") == "does not discriminate"
    one = {lr: replace(r, by_seed={**r.by_seed, "1": swap(r.by_seed["1"])})
           for lr, r in by_lr.items()}
    row = next(r for r in C._precomputed_rows(timing, swept, by_alpha, one)
               if r["claim"].startswith("Each at its best rate on the grid"))
    # on the swapped seed Muon ends below p = -0.5: the row holds on the other two, and says so
    assert row["reproduced"] == "partly" and "holds on 2 of 3 seeds" in row["measured here"]
    # a control that passes where the treatment does: the row does not discriminate
    fooled = {lr: replace(r, by_seed={s: {**v, "p = 0.5": v["p = -0.5"]} for s, v in r.by_seed.items()})
              for lr, r in by_lr.items()}
    row = next(r for r in C._precomputed_rows(timing, swept, by_alpha, fooled)
               if r["claim"].startswith("Each at its best rate on the grid"))
    assert row["reproduced"] == "does not discriminate"


def test_shaping_summary_counts_steps_to_muons_final_loss():
    r = shaping(0)
    rows = {row["update"]: row for row in E.shaping_summary(r)}
    assert rows["p = 0"]["saved"] == 0.0
    ref = E.reference_loss(r.runs["p = 0"])
    for name, row in rows.items():
        if row["steps_to_reference"] is not None:
            h = r.runs[name]
            assert h["train_loss"][h.steps.index(row["steps_to_reference"])] <= ref


# ----------------------------------------------------------------- precomputed files and dry runs


@pytest.mark.parametrize("name", ["spectral_timing", "spectral_practice", "spectral_memory",
                                  "spectral_shaping"])
def test_precomputed_results_load(name):
    payload, prov = results.load(name, as_=E.RECORDS[name])
    assert prov["command"].startswith("python -m dynamics_ops.precompute spectral_optimizers")
    assert isinstance(payload, E.RECORDS[name])
    # read as its record and written back, the file's payload is unchanged
    assert payload.to_dict() == json.loads((results.data_dir() / f"{name}.json").read_text())["payload"]


# each file, one field renamed inside it (file, where in the payload, the field, its new name)
RENAMED = {"spectral_timing": (lambda p: p[0], r"\.rows\[0\]", "rel_error", "relative_error"),
           "spectral_practice": (lambda p: p, "", "reached", "reaches"),
           "spectral_memory": (lambda p: p["1"], r"\.by_alpha\['1'\]", "fraction", "fractions"),
           "spectral_shaping": (lambda p: p["0.05"], r"\.by_lr\['0\.05'\]", "by_seed", "by_seeds")}


@pytest.mark.parametrize("name", list(RENAMED))
def test_a_file_with_a_field_renamed_is_refused_naming_it(name, tmp_path, monkeypatch):
    """Each precomputed file is read through its record (``E.RECORDS``): a payload with a field
    renamed (in a row, at one α, at one rate) is refused when published_claims or the page
    (show_precomputed) reads it, naming the file, where and the field, never a KeyError inside a claim."""
    part, where, field, renamed = RENAMED[name]
    blob = json.loads((results.data_dir() / f"{name}.json").read_text())
    inside = part(blob["payload"])
    inside[renamed] = inside.pop(field)
    for other in RENAMED:  # the chapter's other files as they are
        (tmp_path / f"{other}.json").write_bytes((results.data_dir() / f"{other}.json").read_bytes())
    (tmp_path / f"{name}.json").write_text(json.dumps(blob))
    monkeypatch.setattr(results, "DATA", tmp_path)
    says = f"{name}\\.json{where} does not match.*no field {field}.*unknown field {renamed}"
    with pytest.raises(ValueError, match=says):
        C.published_claims()
    with pytest.raises(ValueError, match=says):
        results.load(name, as_=E.RECORDS[name])
    from dynamics.spectral import figures as F
    loaders = [lambda: F.show_precomputed(name)]  # the page's
    loaders += [{"spectral_practice": E.load_practice, "spectral_shaping": E.load_shaping}.get(name)]
    for loader in filter(None, loaders):
        with pytest.raises(ValueError, match=says):
            loader()


def test_the_records_keep_the_files_layout():
    """The three files with no mapping of fixed keys at the top (a list of rows, a mapping from α,
    one from the rate) are read into one field and written back as they were; a timing row has
    its bfloat16 seconds only where timed (a GPU's file)."""
    rows = [dict(n=8, device="cuda", threads=1, ns_float32_s=2.0, ns_float32_cpu_s=1.0, ns_bfloat16_s=1.0,
                 ns_bfloat16_cpu_s=0.5, svd_s=4.0, svd_cpu_s=3.0, rel_error=0.2, max_sigma_error=0.8)]
    timing = E.Timing.of(rows)
    assert timing.rows[0].ns_s == 1.0 and timing.to_dict() == rows and E.Timing.of(timing) is timing
    assert list(timing.rows[0].to_dict()) == list(rows[0])  # the runner's order of keys
    cpu = E.TimingRow.of({k: v for k, v in rows[0].items() if not k.startswith("ns_bfloat16")})
    assert cpu.ns_s == 2.0 and "ns_bfloat16_s" not in cpu.to_dict() and cpu.ns_by_dtype(cpu=True) == {"float32": 1.0}
    with pytest.raises(ValueError, match=r"MemoryFile.*a Memory is read from a mapping"):
        E.MemoryFile.of({"1": [1, 2]})


def test_precompute_writes_its_four_files_in_a_dry_run(tmp_path, monkeypatch):
    """Every file of the precompute, with its provenance, written to the results folder (a
    dry run: 3 steps per training and the ends of every grid). The gpu preset's dry run is
    tests/ops/test_gpu.py's (its shapes, devices and the CIFAR-10 stand-in)."""
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "3")
    monkeypatch.setenv("DYNAMICS_DEVICE", "cpu")
    monkeypatch.setenv("DYNAMICS_RESULTS_DIR", str(tmp_path))
    paths = Runner(E.precompute_plan("smoke")).run()
    assert sorted(p.name for p in paths) == sorted(f"spectral_{n}.json" for n in
                                                   ("timing", "practice", "memory", "shaping"))
    for p in paths:
        blob = json.loads(p.read_text())
        assert blob["provenance"]["profile"] == "smoke" and p.parent == tmp_path
    memory_payload = json.loads((tmp_path / "spectral_memory.json").read_text())["payload"]
    smoke = S.MemoryConfig.for_profile("smoke")
    assert list(memory_payload) == ["0.5", "2"] and memory_payload["2"]["dim"] == smoke.dim
    torch.set_num_threads(1)


# ----------------------------------------------------------------- the claims table, per seed


def verdict_of(rows, start):
    """The verdict of the one row whose claim starts with ``start``."""
    found = [r for r in rows if r["claim"].startswith(start)]
    assert len(found) == 1, (start, [r["claim"] for r in rows])
    return found[0]["reproduced"]


@functools.cache
def claim_rows(seed):
    """The chapter's claims table on the smoke runs of one seed (no timing row: wall-clock
    numbers are shown on the page, never asserted)."""
    timing = loaded("spectral_timing")
    return C.page_claims(E.run_bands(seed), timing, width(seed), practice(seed), memory(seed),
                            batch(seed), shaping(seed), roles=E.run_roles(seed), seed=seed)


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_every_asserted_claims_row_holds(seed):
    """Every row the prose asserts is "yes" on seeds 0, 1 and 2 at the smoke profile, and
    names what it is compared with and where it looks; the rows the page only shows (their
    verdicts change with the profile, the seed or the machine) are not asserted."""
    from dynamics import plots

    rows = claim_rows(seed)
    judged = [r for r in rows if r.get("evidence") and len(r["seeds"]) > 1]  # on several draws
    assert not plots.failed_claims([r for r in rows if r not in judged]), plots.failed_claims(rows)
    assert all(r["reproduced"] in SMOKE_DRAWS for r in judged if r["asserted"])
    for r in rows:
        if r["asserted"]:
            assert r["control"] and r["window"], r["claim"]
    shown = [r["claim"] for r in rows if not r["asserted"]]
    assert any(c.startswith("The float32 teaching Muon") for c in shown)
    assert any(c.startswith("Scheduling p") for c in shown)
    assert verdict_of(rows, "The quintic's singular values are inside the range") == "yes"
    assert verdict_of(rows, "Five quintic Newton–Schulz steps") == "yes"  # the cubic's 5 steps fail
    assert verdict_of(rows, "Each role's duality map") == "yes"


def test_the_claims_rows_can_say_no():
    """Each asserted row turns to ✗ when its control stands in for the treatment (seed 0's
    runs with the roles swapped; the band row and the tie: the next test): the cubic's band
    for Muon's, AdamW's run for Muon's, SGD's
    recall for Muon's, Adam's first step for Muon's, a foreign map on the diagonal."""
    seed = 0
    bands = E.run_bands(seed)
    swapped_bands = replace(bands, quintic=bands.cubic, cubic=bands.quintic)
    p = practice(seed)
    swapped_p = replace(p, timed={**p.timed, "muon": p.timed["adamw"], "adamw": p.timed["muon"]})
    w = width(seed)
    swapped_w = replace(w, change={**w.change, "muon": w.change["adam"], "adam": w.change["muon"]},
                        norm={**w.norm, "muon": w.norm["adam"], "adam": w.norm["muon"]})
    m, b = memory(seed), batch(seed)
    swapped_m = replace(m, fraction={**m.fraction, "muon": m.fraction["sgd"], "sgd": m.fraction["muon"]},
                        by_draw={**m.by_draw, "muon": m.by_draw["sgd"], "sgd": m.by_draw["muon"]})
    swapped_b = replace(b, recall={"sgd": b.recall["muon"], "muon": b.recall["sgd"]},
                        full={"sgd": b.full["muon"], "muon": b.full["sgd"]},
                        by_draw={"sgd": b.by_draw["muon"], "muon": b.by_draw["sgd"]},
                        full_by_draw={"sgd": b.full_by_draw["muon"], "muon": b.full_by_draw["sgd"]})
    table = R.steepest_table(S.random_matrix(64, 32, "power law", seed=seed), draws=20)
    wrong = replace(table, gain={n: {**g, n: min(g.values())} for n, g in table.gain.items()})
    timing = loaded("spectral_timing")
    rows = C.page_claims(swapped_bands, timing, swapped_w, swapped_p, swapped_m, swapped_b,
                            shaping(seed), [], roles=E.Roles(by_seed={seed: wrong}), seed=seed)
    # not here: the band and width rows judge runs made again on each seed (not the page's,
    # swapped); their controls (the other iteration; Adam's step) go through the same tests
    for start in ("Up to N = d Muon and Newton", "Muon saturates at a critical batch",
                  "SGD's recall peaks at a middle batch", "From Muon's critical batch on",
                  "Each role's duality map"):
        assert verdict_of(rows, start) == "no", start


def test_the_tie_and_band_rows_can_say_no(monkeypatch):
    """The rows a swap cannot test: the tie below SGD's critical batch says no when every
    batch recalls what the full gradient does (its control's gap everywhere); Muon's larger
    critical batch does not discriminate when its control (SGD on a second stream) saturates as late
    or sits within its own spread of 4× (the cpu run), and says yes against a control with no
    spread; the band row
    says no when the exact UVᵀ stands in for five quintic steps (a band of width 0), and does
    not discriminate when its control (the cubic after as many steps) would pass its test."""
    b = batch(0)
    k = len(b.batch_sizes)
    full_everywhere = replace(b, recall={m: [v] * k for m, v in b.full.items()},
                              by_draw={m: [[f] * k for f in v] for m, v in b.full_by_draw.items()})
    rows = C.batch_claims(full_everywhere)
    assert verdict_of(rows, "Below SGD's critical batch SGD and Muon tie") == "no"
    # the published (cpu) run: the control (SGD on a second stream of batches) lands at 1x-2x
    # on the doubling grid, one grid step (its own draws' spread) short of 4x: it does not
    # discriminate, and the row is shown, not asserted; with SGD's own stream in the second's
    # place (1x on every draw, no spread) the same measures say yes
    cpu = batch(0, "cpu")
    crit = next(r for r in C.batch_claims(cpu) if r["claim"].startswith("Muon saturates"))
    assert (crit["reproduced"], crit["asserted"]) == ("does not discriminate", False)
    same = replace(cpu, again_by_draw=cpu.by_draw["sgd"])
    assert verdict_of(C.batch_claims(same), "Muon saturates at a critical batch") == "yes"
    late_again = replace(b, again_by_draw=[[0.0] * (k - 1) + [f] for f in b.full_by_draw["sgd"]])
    per = FA.batch_facts(late_again)["by_draw"]
    assert all(p["control"] >= 4 * p["critical"]["sgd"] for p in per.values())
    rows = C.batch_claims(late_again)
    assert verdict_of(rows, "Muon saturates at a critical batch") == "does not discriminate"
    real = FA.band_numbers

    def swapped(seeds):
        return {s: dict(v, quintic=v["exact"], cubic=v["quintic"]) for s, v in real(seeds).items()}

    def both(seeds):
        return {s: dict(v, cubic=v["quintic"]) for s, v in real(seeds).items()}
    timing = loaded("spectral_timing")
    for fake, said in ((swapped, "no"), (both, "does not discriminate")):
        monkeypatch.setattr(C, "band_numbers", fake)
        rows = C.page_claims(E.run_bands(0), timing, width(0), practice(0), memory(0), b,
                             shaping(0), [], seed=0)
        assert verdict_of(rows, "Five quintic Newton–Schulz steps") == said, fake.__name__


def test_the_decayed_control_and_the_step_schedule_facts():
    """Section 5's control: Muon with its rate decayed linearly to 0 runs beside the constant-
    rate runs (its rate reaches 0: the last steps do not move the weights), and the claims
    show it; exercise 6's glued numbers come from the runs they name."""
    cfg = S.ShapingConfig.for_profile("smoke", steps=20, ps=[0.0, -0.5])
    r = E.run_shaping(cfg, bars=False, decayed=True)
    assert E.DECAYED in r.runs and r.schedule in r.runs
    assert E._linear_decay(20, 0) == 1.0 and E._linear_decay(20, 20) == 0.0
    rows = C.shaping_claims(r)
    decay = next(row for row in rows if row["claim"].startswith("A learning-rate decay alone"))
    assert decay["evidence"] and "decayed run's place" in decay["control"] and not decay["asserted"]
    step = E.run_shaped(cfg, S.default_data(), lambda t: 0.5 if t < 7 else -0.25, bars=False)
    f = FA.step_schedule_facts(r, step)
    assert f["step_final"] == f"{E.reference_loss(step):.3f}"
    assert f["step_vs_linear"] in ("below", "above", "level with") and "p = -0.5" in f["step_fixed"]

    sf = FA.shaping_facts(r, E.load_shaping()[0])
    assert sf["decay_vs_sched"] in ("ends below", "does not end below")
    assert sf["muon_best_lr"] == "0.02" and sf["muon_at_edge"].startswith("the lowest rate")


def test_exercise_6_calls_a_tie_a_tie(monkeypatch):
    """Two final losses within ORDER_MARGIN are level, not ordered: the cpu run's step schedule
    ended at 0.107 against fixed p = -0.5's 0.109, and the page read it as 'ends below'."""
    from dynamics.spectral import facts as Fa

    class Run:  # a run's final loss, as reference_loss reads it here
        def __init__(self, v):
            self.v, self.diverged = v, False

    monkeypatch.setattr(Fa, "reference_loss", lambda h: h.v)
    shaping = E.Shaping(runs={"p = -0.5": Run(0.109), "p = -0.25": Run(0.172), "p = 0": Run(0.243),
                              "schedule": Run(0.049)}, schedule="schedule", lr=0.05)
    f = Fa.step_schedule_facts(shaping, Run(0.107))
    assert f["step_below"] == "p = -0.25, p = 0 by more than 10%, and is level (within 10%) with p = -0.5"
    assert f["step_vs_linear"] == "above"
    assert Fa.step_schedule_facts(shaping, Run(0.05))["step_vs_linear"] == "level with"

