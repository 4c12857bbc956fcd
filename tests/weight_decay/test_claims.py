"""dynamics.weight_decay.facts and .claims: the numbers the prose glues (on the published grids
and on tiny runs), the claims table, and rows that can say "no"."""
import dataclasses

import numpy as np
import pytest

from dynamics import plots, results
from known import known_answer
from dynamics.weight_decay import claims as C
from dynamics.weight_decay import facts as F
from dynamics.weight_decay import figures as G
from dynamics.weight_decay import experiments as E
from dynamics.weight_decay import science as S


def _grid():
    """The published grids, read as the page reads them (through their record)."""
    return results.load("weight_decay_grid", as_=E.RECORDS["weight_decay_grid"])[0]


def _rec(cls, **fields):
    """A record ``cls`` built by hand with only ``fields`` set (the others None): the parts of a
    run a reader under test reads, by the names the runner's record gives them."""
    return cls(**{f.name: fields.get(f.name) for f in dataclasses.fields(cls)})


def _with_seeds(grid, **accs):
    """``grid`` with the per-seed accuracies of the grids named replaced, ``kind=acc_seeds``."""
    return dataclasses.replace(grid, grids={k: dataclasses.replace(g, test_acc_seeds=accs[k])
                                            if k in accs else g for k, g in grid.grids.items()})


def test_claims_table(payload):
    eq = [E.run_equilibrium(c.replace(steps=40), 0, bars=False) for c in E.equilibrium_configs("smoke")]
    rows = C.page_claims(grid=payload, live={0: payload}, equilibria={0: eq})
    assert len(rows) >= 4
    assert all(r["reproduced"] in plots.VERDICTS for r in rows)
    plots.claims_table(rows)
    assert C.page_claims() == []



def test_prose_numbers_of_the_precomputed_grids():
    """The numbers sections 1 and 3 glue into their prose come from the grids: the AdamW
    ridge of the plain MLP over its band, seed by seed, and the invariant net's products."""
    grid = _grid()
    band = F.ridge_band(grid, "adamw", C.PLAIN_BAND)
    assert len(band["per_seed"]) == len(grid.seeds) and band["lr_factor"] == pytest.approx(10, rel=0.01)
    for ridge, moves in zip(band["per_seed"], band["moves"]):
        assert moves == pytest.approx(max(ridge) / min(ridge))
    num = F.decoupling_numbers(grid)
    assert all(isinstance(v, str) and v and "n/a" not in v for v in num.values())
    inv = F.invariant_numbers(grid)
    assert 1 <= inv["prod_factor"] < 3  # the best product hardly moves below the largest eta
    assert all("n/a" not in v for k, v in inv.items() if k != "prod_factor"), inv
    rows = C.published_claims()
    assert [r["claim"] for r in rows] == [r["claim"] for r in C.grid_claims(grid)]
    assert rows and not any(r["asserted"] for r in rows)  # each shown; the prose glues its verdict


def test_prose_numbers_of_tiny_runs(payload):
    inv = F.invariant_numbers(payload)  # a grid too small for the prose: no crash, "n/a"
    assert set(inv) >= {"wd_inv_prod", "wd_inv_slope"}
    eq = E.run_equilibrium(S.EquilibriumConfig.for_profile("smoke", steps=40), 0, bars=False)
    num = F.equilibrium_numbers([eq])
    assert num["wd_adamw_rms_dev"].endswith("%")
    assert "wd_adamw_verdict" not in num  # the prose glues the claims row's verdict, not its own
    clock = E.run_clock(S.ClockConfig.for_profile("smoke", steps=40), 0, bars=False)
    assert F.clock_numbers(clock)["wd_clock_lr_factor"] == "4"
    text = E.answer_zero_gradient()
    assert "0.905 after 1,000 steps" in text and "0.26 after 1,000" in text


def test_decoupling_row_has_one_outcome():
    """The decoupling row is Loshchilov & Hutter's claim alone (AdamW's best eta * lambda stays
    put while Adam + L2's best coefficient moves): on the published grid, where Adam + L2's
    best coefficient does not move, it is "no"; a grid where AdamW's best lambda falls as
    1/eta and Adam + L2's moves gives "yes"."""
    import numpy as np
    from dynamics import results

    grid = _grid()
    row = next(r for r in C.grid_claims(grid) if r["claim"].startswith("with AdamW the best decay"))
    # Adam + L2's best coefficient does not move either (the control passes): no verdict
    assert row["reproduced"] == "does not discriminate" and row["seeds"] == [0, 1, 2]
    decays, lrs = np.asarray(grid.grids["adamw"].decays), np.asarray(grid.grids["adamw"].lrs)

    def peaked(best):  # one seed's accuracy grid peaking at decay best[j] in column j
        return (1 - np.abs(np.log10(decays)[:, None] - np.log10(best)[None, :])).tolist()

    fixed_product = peaked(1e-3 / lrs)
    moving = peaked(lrs)  # Adam + L2's best coefficient grows with eta
    g = _with_seeds(grid, adamw=[fixed_product] * 3, adam_l2=[moving] * 3)
    row = next(r for r in C.grid_claims(g)
               if r["claim"].startswith("with AdamW the best decay"))
    assert row["reproduced"] == "yes"


def test_numbers_reads_each_section_by_name(payload):
    """``numbers(section, *results)`` is each section's numbers function, and refuses a
    section it does not know."""
    grid = _grid()
    assert F.numbers("decoupling", grid) == F.decoupling_numbers(grid)
    assert F.numbers("live_slope", payload, grid) == F.live_slope_numbers(payload, grid)
    with pytest.raises(ValueError, match="choose one of"):
        F.numbers("nope", grid)


def test_published_rows_are_judged_on_every_seed():
    """The rows of the published grids are judged on each of the file's seeds, name their
    control and window, and print the seeds' spread (median and range) so the margin shows.
    None is asserted: the last one, the decay-free region below eta * lambda * t = 1, is judged
    eta by eta against as many decays just above the line on AdamW's own grid, and at the
    largest learning rates those are as flat (the engine: "does not discriminate")."""
    grid = _grid()
    rows = C.published_claims()
    assert not [r for r in rows if r["asserted"]]
    for r in rows:
        assert r["seeds"] == [0, 1, 2] == grid.seeds and r["control"] and r["window"]
        assert "median" in r["measured here"] and "seeds 0, 1, 2" in r["measured here"]
    flat = next(r for r in rows if r["claim"].startswith("below the line"))
    assert flat["reproduced"] == "does not discriminate"
    # eta = 1e-4 has a single decay above the line: no control there, so no part
    assert [e["label"] for e in flat["evidence"]][0].startswith("η = 3.2")
    by_lr = F._below_line(grid)
    assert min(by_lr) > grid.lrs[0]
    assert all(v < C.FLAT_BELOW for below, _ in by_lr.values() for v in below.values())


@known_answer(C._side_ratio, how="a constructed column of 9 decays at eta = 3.2e-4 and t = 1000: "
              "the 7 decays below the line (lambda < 3.16) within 0.1 of each other, the 2 above "
              "0.1 and 1.1: range 0.1 below, 1 above, over a column's range 1.1")
def test_side_ratio_reads_each_side_of_the_line():
    decays = [10 ** (k / 2 - 3) for k in range(9)]
    col = [0.5, 0.55, 0.6, 0.5, 0.55, 0.6, 0.5, 1.1, 0.1]
    adamw = E.Grid(kind="adamw", lrs=[10 ** -3.5], decays=decays, eval_steps=[1000], seeds=[0, 1],
                   test_acc=None, train_loss=None, test_acc_seeds=[[[a] for a in col]] * 2,
                   stopped=False, diverged=0, strategy=None, wall_time=None)
    payload = E.decoupling({"adamw": adamw}, 0)
    assert G.line_sides(payload, 0) == ([0, 1, 2, 3, 4, 5, 6], [7, 8])
    r = C._GridSeed((payload, 0, "adamw", 0))
    assert C._side_ratio(r) == pytest.approx(0.1 / 1.0)
    assert C._side_ratio(r, above=True) == pytest.approx(1.0)
    assert G.flat_columns(payload) == [0]


def test_grid_rows_say_no_when_a_seed_contradicts_them():
    """The rows are judged seed by seed: on a grid whose columns are flat below the line
    eta * lambda * t = 1 and fall above it, the below-the-line row says "yes"; one seed whose
    decay matters below the line too turns it to "partly" (with the words "holds on 2 of 3
    seeds"), and all three seeds to "no". A best lambda that rises above the plain MLP's band
    where it fell is "no"."""
    grid = _grid()
    accs = np.asarray(grid.grids["adamw"].test_acc_seeds, dtype=float)
    below = np.outer(grid.grids["adamw"].decays, grid.lrs) * grid.eval_steps[-1] < 1
    depth = np.maximum(np.cumsum(~below, axis=0) - 1, 0)  # 0 below and just above, then 1, 2, ...
    rng = np.random.default_rng(0)
    fall = 0.4 * depth / np.maximum(depth.max(0), 1)  # to 0.4 below the best at the largest decay
    clean = 0.5 - fall[None] + 0.002 * rng.random(accs.shape)  # flat below the line, falling above
    ramp = np.linspace(0, 0.5, accs.shape[1])[:, None] * np.ones(accs.shape[2])  # [decay][lr]
    noisy = clean.copy()
    noisy[1] = clean[1] + ramp  # decay matters everywhere on seed 1, below the line too

    def row(acc_seeds, start):
        gg = _with_seeds(grid, adamw=acc_seeds.tolist())
        return next(r for r in C.grid_claims(gg) if r["claim"].startswith(start))

    assert row(clean, "below the line")["reproduced"] == "yes"
    one = row(noisy, "below the line")
    assert one["reproduced"] == "partly" and "holds on 2 of 3 seeds" in one["measured here"]
    assert row(clean + ramp[None], "below the line")["reproduced"] == "no"
    flipped = accs[:, ::-1, :]  # the best decay now rises where it fell
    assert row(flipped, "plain MLP: AdamW's best λ is lower")["reproduced"] == "no"


def test_lower_above_the_band_needs_a_margin():
    """The plain MLP's best lambda above the band counts as lower only below LOWER_BY times the
    band's least (the referee's seed 1: 0.98, a column spanning 0.450 to 0.462, is no lead): on
    the published grid the row is judged, not asserted, and holds on 2 of 3 seeds; the
    band's row, where the best lambda hardly moves, is read by the tie rule and shown too."""
    grid = _grid()
    lower = next(r for r in C.grid_claims(grid) if r["claim"].startswith("plain MLP: AdamW's best λ is lower"))
    # seed 1 misses the bar (the files of 2026-11-29 made here: 1.8), so the row never says yes
    ev = lower["evidence"][0]
    assert not lower["asserted"] and lower["reproduced"] in ("partly", "does not discriminate")
    assert not C.LOWER.test.passes(ev["treatment"][1])
    band = next(r for r in C.grid_claims(grid) if "hardly moves" in r["claim"])
    # read by the tie rule (as the scale-invariant row is), the plain MLP's ties allow no move
    # (1x) on every seed, and its control's, the scale-invariant net's, allow 1x on seed 1 (its
    # white dots, the parabola's vertices, fall 8.2x to 113x): the row cannot discriminate,
    # and is shown, not asserted
    assert not band["asserted"] and band["reproduced"] == "does not discriminate"
    ev = band["evidence"][0]
    assert all(v < C.PLAIN_MOVES for v in ev["treatment"].values())
    assert any(v < C.PLAIN_MOVES for v in ev["control"].values())
    # shown, not asserted: its control, AdamW's largest decay, falls short by 0.08-0.09 here,
    # near the 0.1 bar (on the files made elsewhere it passed the bar: "does not discriminate")
    l2 = next(r for r in C.grid_claims(grid) if r["claim"].startswith("Adam + L2's largest penalty"))
    assert not l2["asserted"] and l2["reproduced"] in ("yes", "does not discriminate")
    said = F.decoupling_numbers(grid)["wd_l2_band_control"]
    assert said.startswith("falls short of its column's best too, at its closest by ")
    assert ("fails the row's test" in said) == (l2["reproduced"] != "does not discriminate")
    # the scale-invariant row accepts a fall of exactly tenfold ("as 1/η"): on the grid's √10
    # steps two decays a decade apart give 10 to the grid's precision
    inv = next(r for r in C.grid_claims(grid) if r["claim"].startswith("scale-invariant net"))
    assert C.INV_FALLS.test.passes(10.0) and not C.INV_FALLS.test.passes(9.9)
    assert float(f"{3.1622776601683795 / 0.31622776601683794:.6g}") == 10.0  # as _least_fall reads
    assert all(v is None or v == float(f"{v:.6g}") for v in inv["evidence"][0]["treatment"].values())
    assert F.decoupling_numbers(grid)["wd_l2_moving"] == "none of the 3 seeds"


def _sym_run(norm, angle, early_norm=1.0, early_angle=0.1, tau=100.0):
    """An SGD run of section 2 for the symmetry row: settled ``norm`` and ``angle`` (last
    quarter), and ``early_norm`` / ``early_angle`` over its first tau / 4 (steps 1 to 25 of
    its curves; a different value after, which the early window must not read)."""
    names = ("a", "b")
    steps = [0, 10, 20, 50, 100]
    rms = np.array([[early_norm] * 2] * 3 + [[norm] * 2] * 2)  # numel 1: rms = norm
    angle_curve = np.array([[early_angle] * 2] * 2 + [[angle] * 2] * 3)
    return _rec(E.Equilibrium, optimizer="sgd", tau=tau, names=list(names), numel=[1, 1],
                step=steps, rms=rms, angle_step=[5, 15, 35, 75, 100], angle=angle_curve,
                layers={n: _rec(E.EquilibriumLayer, norm=norm, angle=angle) for n in names})


def test_symmetry_row_needs_the_predicted_ratios():
    """Exercise 2's row: norms sqrt(4) = 2 times smaller and equal angles pass; equal norms (an
    equilibrium set by eta * lambda alone) fail. The control, the same pair over the first
    quarter of tau, fails while the runs still sit near W0 and turn at 1/4 the rate; a pair
    that already matched the prediction there would make the row not discriminate."""
    eq = {s: [_rec(E.Equilibrium, optimizer="adamw", layers={}), _sym_run(2.0, 0.1)]
          for s in (0, 1, 2)}
    good = {s: _sym_run(1.02, 0.098, early_angle=0.025) for s in (0, 1, 2)}
    assert C.symmetry_claims(eq, good)[0]["reproduced"] == "yes"
    same = {s: _sym_run(2.0, 0.1, early_angle=0.025) for s in (0, 1, 2)}
    assert C.symmetry_claims(eq, same)[0]["reproduced"] == "no"
    settled = {s: _sym_run(1.02, 0.098, early_norm=0.5) for s in (0, 1, 2)}
    assert C.symmetry_claims(eq, settled)[0]["reproduced"] == "does not discriminate"
    assert C.symmetry_config("smoke").lr * C.SYM_FACTOR == pytest.approx(
        next(c for c in C.equilibrium_configs("smoke") if c.optimizer == "sgd").lr)


def test_clock_pointwise_reads_single_evaluations():
    """Two matched runs whose losses differ by 10% at every evaluation but the first (equal):
    the pointwise spread is 0 then 10% at every eta * lambda * t, the odd run ignored; the
    glued ranges leave out t = 0."""
    from types import SimpleNamespace

    class H(SimpleNamespace):
        def __getitem__(self, k):
            return getattr(self, k)

        def __len__(self):
            return len(self.steps)

    steps = [0, 100, 200, 400]
    a = H(steps=steps, train_loss=[2.0, 1.0, 1.0, 1.0])
    b = H(steps=steps, train_loss=[2.0, 1.1, 1.1, 1.1])
    odd = H(steps=steps, train_loss=[2.0, 5.0, 5.0, 5.0])
    clock = E.Clock.of(dict(runs=[dict(lr=0.01, weight_decay=0.5, matched=True),
                                  dict(lr=0.02, weight_decay=0.25, matched=True),
                                  dict(lr=0.01, weight_decay=2.0, matched=False)],
                            histories=[a, b, odd], final_loss=[1.0, 1.1, 5.0], spread=0.1,
                            ratio=4.8, contrast=4.0, product=0.005, stopped=False, strategy=None))
    pts = F.clock_pointwise(clock)
    assert [t for t, _ in pts] == pytest.approx([0, 0.5, 1.0, 2.0])
    assert [v for _, v in pts] == pytest.approx([0, 0.1, 0.1, 0.1])
    n = F.clock_numbers(clock)
    assert n["wd_clock_pointwise_early"] == "10%" and n["wd_clock_pointwise_late"] == "10%"


def test_the_early_angle_sentence_follows_its_numbers():
    """Section 2: "it starts near it" only where every bin of every matrix over the first
    quarter of tau is within ANGLE_TOL of the prediction; at the cpu scale a ratio of means
    read 0.94 to 1.1 while the bins ran from about 2.3x down to 0.4x."""
    from dynamics.weight_decay.claims import ANGLE_TOL
    from dynamics.weight_decay.facts import _angle_start

    near = _angle_start({"a": [(5, 0.94), (14, 1.1)], "b": [(5, 1.0), (14, 1.05)]})
    assert near.startswith("It starts near it too") and "every bin" in near
    one_out = _angle_start({"a": [(5, 1 + ANGLE_TOL / 2), (14, 2.0)]})
    assert one_out.startswith("It does not start on it") and "1 of its 2 bins" in one_out
    cpu = _angle_start({"hidden.0": [(5, 2.29), (14, 1.08), (23, 0.73), (32, 0.54), (41, 0.62)],
                        "head": [(5, 2.45), (14, 1.2), (23, 0.73), (32, 0.6), (41, 0.76)]})
    assert "2.3 to 2.5 times" in cpu and "0.62 to 0.76 times it" in cpu and "2 of its 10" in cpu


@known_answer(C._dev, how="a run settled 10% above its predicted RMS and 5% below its angle is "
              "0.1 and 0.05 off; a control with lambda * 8 settled exactly at its own prediction, "
              "sqrt(8) lower in RMS and higher in angle, is 1 - 1/sqrt(8) and sqrt(8) - 1 off this "
              "run's prediction")
def test_equilibrium_rows_read_a_run_against_its_own_or_another_runs_prediction():
    lay = lambda rms, pred, angle, apred: _rec(E.EquilibriumLayer, rms=rms, rms_pred=pred,
                                               angle=angle, angle_pred=apred)
    run = _rec(E.Equilibrium, layers={"a": lay(1.1, 1.0, 0.095, 0.1), "b": lay(2.0, 2.0, 0.1, 0.1)})
    r8 = 8 ** 0.5
    faster = _rec(E.Equilibrium, layers={"a": lay(1 / r8, 1 / r8, 0.1 * r8, 0.1 * r8),
                                         "b": lay(2 / r8, 2 / r8, 0.1 * r8, 0.1 * r8)})
    assert C._dev("rms")(run) == pytest.approx(0.1)
    assert C._dev("angle")(run) == pytest.approx(0.05)
    assert C._dev("rms")(faster, run) == pytest.approx(1 - 1 / r8)
    assert C._dev("angle")(faster, run) == pytest.approx(r8 - 1)
    assert C._dev("rms")(faster) == pytest.approx(0)


def test_equilibrium_rows_pass_on_a_settled_run_and_fail_on_their_control():
    """The three section-2 rows built for AdamW say yes on runs that settle at the prediction in
    tau steps, and their controls (the same runs as lambda * EQ_CONTROL ones) fail the test."""
    from dynamics import evidence
    r8, k = C.EQ_CONTROL ** 0.5, C.EQ_CONTROL

    def run(s, scale=1.0):
        lay = lambda j: _rec(E.EquilibriumLayer, rms=(1 + 0.01 * s + 0.01 * j) / scale,
                             rms_pred=1 / scale, angle=0.1 * scale * (1 - 0.01 * s), angle_pred=0.1 * scale,
                             relax_steps=int(round((100 + 5 * s) / scale ** 2)))
        return _rec(E.Equilibrium, tau=100 / scale ** 2, layers={n: lay(j) for j, n in enumerate("abc")})
    runs = {s: run(s) for s in range(3)}
    pairs = {s: (run(s, r8), runs[s]) for s in runs}
    rows = C._equilibrium_rows("adamw") + [C.RELAX]
    assert [evidence.judge(c, runs, pairs).verdict for c in rows] == ["yes"] * 3
    assert k > C.RELAX_FACTOR ** 2  # the control's tau lies outside the treatment's window
    assert [c.asserted for c in rows] == [False, True, True]
    # SGD's rows are shown only: their control is the faster run against its own prediction
    sgd = C._equilibrium_rows("sgd")
    assert not any(c.asserted for c in sgd)
    assert [evidence.judge(c, runs, pairs).verdict for c in sgd] == ["does not discriminate"] * 2


@known_answer(C._relax_factor, how="relaxation times of 2τ and τ/2 are both a factor 2 off τ; "
              "a matrix that never relaxes is infinitely off")
def test_relax_factor_reads_both_ways():
    run = _rec(E.Equilibrium, tau=100.0, layers={k: _rec(E.EquilibriumLayer, relax_steps=v)
                                                 for k, v in (("a", 200), ("b", 50))})
    assert C._relax_factor(run) == pytest.approx(2.0)
    # the control: a run with lambda * 8 relaxes in 8x fewer steps than this run's tau
    faster = _rec(E.Equilibrium, tau=12.5, layers={"a": _rec(E.EquilibriumLayer, relax_steps=12)})
    assert C._relax_factor(faster, run) == pytest.approx(100 / 12)
    run.layers["c"] = _rec(E.EquilibriumLayer, relax_steps=None)
    assert C._relax_factor(run) == float("inf")


@known_answer(C._sym_dev, how="norms exactly sqrt(4) = 2 times smaller and equal angles deviate "
              "by 0; the run against itself (norm ratio 1) is 50% off, 0.5 / RMS_TOL tolerances")
def test_symmetry_deviation_in_tolerances():
    def run(norm):
        return _rec(E.Equilibrium, layers={"a": _rec(E.EquilibriumLayer, norm=norm, angle=0.1)})

    base = run(2.0)
    assert C._sym_dev((base, run(1.0))) == pytest.approx(0)
    assert C._sym_dev((base, base)) == pytest.approx(0.5 / C.RMS_TOL)


@known_answer(C._early, how="curves constant at 1 (norm, numel 4: RMS 0.5) and 0.1 (angle) up "
              "to tau / 4 = 25 and different after: the window reads 1 and 0.1; the pair over it, "
              "equal norms and angles 1/4 apart, is |0.25 - 1| / ANGLE_TOL off")
def test_symmetry_control_reads_the_first_quarter_of_tau():
    base = _sym_run(2.0, 0.1)
    base = dataclasses.replace(base, numel=[4, 4], rms=base.rms / 2)
    assert C._early(base) == {"a": pytest.approx((1.0, 0.1)), "b": pytest.approx((1.0, 0.1))}
    slow = _sym_run(1.0, 0.1, early_angle=0.025)
    assert C._sym_dev((_sym_run(2.0, 0.1), slow), early=True) == pytest.approx(0.75 / C.ANGLE_TOL)
    short = dataclasses.replace(_sym_run(2.0, 0.1), tau=4.0)  # no point within tau / 4: the first after start
    assert C._early(short)["a"] == pytest.approx((1.0, 0.1))


def test_window_control_and_tail_failures_in_words():
    from dynamics.weight_decay import window as W

    run = _rec(W.Window, settings=[
        _rec(W.WindowSetting, weight_decay=1.0, tau=100.0, measured=120.0, end=0.15),
        _rec(W.WindowSetting, weight_decay=0.0, tau=float("inf"), measured=float("inf"), end=0.8)])
    assert W._control_factor(run) == float("inf") and W._worst(run) == pytest.approx(1.2)
    assert W._longest(run).end == 0.15
    from dynamics.weight_decay.spectra import TailFit

    fit = TailFit(p=1e-6, loglik_ratio=3.0, cutoff_p=0.05, gap_p=0.5, alpha=1.4, xmin=1.0,
                  n_tail=100, ks=0.05, spikes=1, power_law=False)
    assert F._fails(fit) == "a cutoff fits significantly better"
    assert F._fails(dataclasses.replace(fit, cutoff_p=1.0)) == "none"
    assert F._fails(dataclasses.replace(fit, loglik_ratio=-1.0, alpha=3.0)).count(";") == 2


@known_answer(G.mp_edge_ratio, how="a random Gaussian matrix (square and 200 x 500) reaches its "
              "Marchenko-Pastur edge and no further (within the null of its shape); a square one "
              "with a rank-one spike of strength 3 above the BBP threshold 1 has its top eigenvalue "
              "at ((1 + 9) / 3)^2 = 11.1, 2.78 times the edge 4; a spike of 0.5, below it, none")
def test_mp_edge_ratio_sees_a_spike_and_not_a_random_matrix():
    rng = np.random.default_rng(1)
    n = 800  # the outlier's finite-size scatter is a few percent at 800
    x = rng.standard_normal((n, n)) / np.sqrt(n)
    assert G.mp_edge_ratio(np.linalg.svd(x, compute_uv=False), (n, n)) < G.mp_null((n, n)) < 1.05
    rect = rng.standard_normal((200, 500))
    assert G.mp_edge_ratio(np.linalg.svd(rect, compute_uv=False), (200, 500)) == pytest.approx(1, abs=0.05)
    u, v = rng.standard_normal((2, n))
    spike = np.outer(u, v) / np.linalg.norm(u) / np.linalg.norm(v)
    for t, want in ((3.0, ((1 + 9) / 3) ** 2 / 4), (0.5, 1.0)):
        sv = np.linalg.svd(x + t * spike, compute_uv=False)
        assert G.mp_edge_ratio(sv, (n, n)) == pytest.approx(want, rel=0.06), t
    assert C.EDGE.measure(np.linalg.svd(x + 3 * spike, compute_uv=False)) > 2
    with pytest.raises(ValueError, match="min\\(shape\\)"):
        G.mp_edge_ratio([1.0, 2.0], (3, 4))


@known_answer(G.tied_decays_per_lr, how="a constructed grid of 3 seeds: in the first column decays "
              "1 and 10 average 0.80 and 0.79 with seeds spread by 0.04, so the best is the range "
              "1 to 10 while decay 0.1 (0.60) is out; in the second, one clear best (0.9 against "
              "0.5, no spread) is a range of one value; a column where decay never beats the "
              "smallest by min_gain has none")
def test_tied_decays_per_lr_says_when_the_best_decay_is_a_tie():
    decays = [0.1, 1.0, 10.0]
    col_tie = [[0.60, 0.78, 0.77], [0.60, 0.80, 0.79], [0.60, 0.82, 0.81]]  # [seed][decay]
    col_one = [[0.5, 0.9, 0.5]] * 3
    col_none = [[0.7, 0.7, 0.7]] * 3
    acc = np.stack([np.array(c) for c in (col_tie, col_one, col_none)], axis=2)  # [seed][decay][lr]
    assert F.tied_decays_per_lr(acc, decays) == [(1.0, 10.0), (1.0, 1.0), None]
    assert S.best_decay_per_lr(acc.mean(0), decays)[0] != pytest.approx(10.0)  # argmax picks one
    with pytest.raises(ValueError, match="two or more seeds"):
        F.tied_decays_per_lr(acc[:1], decays)


@known_answer(G.tied_decays_per_lr, how="the same constructed grid read on one seed: seed 0's "
              "first column has 0.78 at decay 1 and 0.77 at 10, a gap within the cells' seeds' "
              "spread (0.04), so its best is the range 1 to 10; seed 2's second column has one "
              "clear best")
def test_tied_decays_per_lr_reads_one_seed_with_the_seeds_spread():
    decays = [0.1, 1.0, 10.0]
    col_tie = [[0.60, 0.78, 0.77], [0.60, 0.80, 0.79], [0.60, 0.82, 0.81]]
    col_one = [[0.5, 0.9, 0.5]] * 3
    acc = np.stack([np.array(c) for c in (col_tie, col_one)], axis=2)
    assert C.tied_decays_per_lr(acc, decays, seed=0)[0] == (1.0, 10.0)
    assert C.tied_decays_per_lr(acc, decays, seed=2)[1] == (1.0, 1.0)
    with pytest.raises(ValueError, match="seed 3"):
        C.tied_decays_per_lr(acc, decays, seed=3)


@known_answer(C._least_fall, how="constructed grids: each seed's accuracy peaks at lambda = "
              "1e-6 / eta^2 (a fall of 100x over the decade eta = 0.001 to 0.01) with no seed "
              "spread, so the least fall is 100x and the row says yes; widen one cell's spread "
              "across seeds at eta = 0.01 until the grid's largest decay ties with the best there, "
              "and the least fall the ties allow drops to 1 / 10 = 0.1x, the row to no")
def test_invariant_row_reads_the_least_fall_its_ties_allow():
    grid = _grid()
    decays, lrs = np.asarray(grid.grids["adamw"].decays), np.asarray(grid.lrs)

    def peaked(best):
        return 1 - 0.1 * np.abs(np.log10(decays)[:, None] - np.log10(best)[None, :])

    inv = peaked(1e-6 / lrs ** 2)
    flat = [peaked(np.ones_like(lrs)).tolist()] * 3

    def row(inv_seeds):
        gg = _with_seeds(grid, adamw_invariant=inv_seeds, adamw=flat)
        r = next(r for r in C.grid_claims(gg) if r["claim"].startswith("scale-invariant"))
        return r, C._least_fall(C._GridSeed((gg, 0, "adamw_invariant")))

    r, fall = row([inv.tolist()] * 3)
    assert fall == pytest.approx(100) and r["reproduced"] == "yes"
    j = int(np.argmin(np.abs(lrs - 0.01)))
    noisy = np.stack([inv] * 3)
    noisy[1, -1, j] += 1.0  # lambda = 10 at eta = 0.01: the seeds disagree by 1
    r, fall = row(noisy.tolist())
    assert fall == pytest.approx(0.1) and r["reproduced"] == "no"


def test_claims_numbers_read_the_clock_row():
    """The clock sentence glues the row's own numbers: the matched runs' spread and the run at
    another product off their level, seed by seed, in percent."""
    clocks = {s: E.Clock(runs=[], histories=[], final_loss=[], product=0.005, contrast=4.0,
                         stopped=False, spread=0.01 * (s + 1), ratio=1.2 + 0.1 * s, strategy=None)
              for s in range(3)}
    from dynamics import evidence
    row = evidence.judge(C.CLOCK, clocks, clocks).row()
    out = F.numbers("claims", [row])
    assert out == dict(wd_clock_row_spread="1 to 3%", wd_clock_row_off="20 to 40%",
                       wd_adamw_verdict=plots.MARKS["not at this scale"],  # no equilibrium row
                       wd_sgd_angle_fooled="on no seed judged here (the runs are too short to "
                                           "settle)",  # and no SGD angle row
                       wd_edge_said="")  # nor a Marchenko-Pastur row
    assert F.claims_numbers([])["wd_clock_row_off"] == "n/a"


@known_answer(C._heavier_gain, how="two runs (alpha 3, accuracy 0.6) and (alpha 2, accuracy 0.7): "
              "the heavier tail (alpha 2) is 0.1 ahead, in either order; with the accuracies "
              "swapped it is 0.1 behind; equal alphas have no heavier tail (NaN)")
def test_link_row_reads_the_heavier_tail_against_the_seeds_own_difference():
    """The tails-and-generalization row: the heavier tail's run ahead by more than the margin on
    every seed, while two runs of one recipe on neighbouring seeds (the control) are not, says
    yes; a control as far apart as the margin cannot discriminate; a heavier tail behind, no."""
    import math
    from dynamics import evidence

    assert C._heavier_gain([(3.0, 0.6), (2.0, 0.7)]) == pytest.approx(0.1)
    assert C._heavier_gain([(2.0, 0.7), (3.0, 0.6)]) == pytest.approx(0.1)
    assert C._heavier_gain([(3.0, 0.7), (2.0, 0.6)]) == pytest.approx(-0.1)
    assert math.isnan(C._heavier_gain([(2.0, 0.6), (2.0, 0.7)]))
    ahead = {s: [(2.6, 0.60), (1.4, 0.66 + 0.01 * s)] for s in range(3)}
    same = {s: [(2.6, 0.60), (2.5, 0.61)] for s in range(3)}  # one recipe, two seeds
    assert evidence.judge(C.LINK, ahead, same).verdict == "yes"
    assert not any(C.LINK.test.passes(C.LINK.measure(p)) for p in same.values())
    wide = {s: [(2.6, 0.60), (2.5, 0.60 + 2 * C.BEST_MARGIN)] for s in range(3)}
    assert evidence.judge(C.LINK, ahead, wide).verdict == "does not discriminate"
    behind = {s: [(2.6, 0.64), (1.4, 0.59)] for s in range(3)}
    assert evidence.judge(C.LINK, behind, same).verdict == "no"


@pytest.mark.parametrize("where,old,new,says", [
    ((), "lrs", "learning_rates", r"weight_decay_grid\.json does not match Decoupling"),
    (("grids", "adamw"), "test_acc_seeds", "test_acc_per_seed",
     r"weight_decay_grid\.json\.grids\['adamw'\] does not match Grid"),
])
def test_the_grid_file_is_read_through_its_record_and_a_renamed_field_fails(
        where, old, new, says, tmp_path, monkeypatch):
    """data/weight_decay_grid.json is read as its record (E.RECORDS): a payload whose field is
    renamed, at the top or inside a grid, is refused when published_claims reads it, naming
    the file, where, the field and the command that regenerates it; read as it is, it is a
    Decoupling of Grids."""
    import json

    assert E.RECORDS == {"weight_decay_grid": E.Decoupling}
    grid = _grid()
    assert isinstance(grid, E.Decoupling) and all(isinstance(g, E.Grid) for g in grid.grids.values())
    blob = json.loads((results.data_dir() / "weight_decay_grid.json").read_text())
    part = blob["payload"]
    for key in where:
        part = part[key]
    part[new] = part.pop(old)
    (tmp_path / "weight_decay_grid.json").write_text(json.dumps(blob))
    monkeypatch.setattr(results, "DATA", tmp_path)
    with pytest.raises(ValueError, match=f"{says}: no field {old}; unknown field {new}.*"
                                         "dynamics_ops.precompute weight_decay"):
        C.published_claims()


def test_the_equilibrium_sentence_glues_its_rows_verdict():
    """§2's sentence on AdamW's RMS glues the claims row's verdict; where the runs are too short
    to settle (smoke) the table has no such row and the sentence says so."""
    assert F.claims_numbers([])["wd_adamw_verdict"] == plots.MARKS["not at this scale"]
    row = {"claim": "AdamW: RMS → √(η/2λ) per element; angle → …", "reproduced": "no"}
    assert F.claims_numbers([row])["wd_adamw_verdict"] == plots.MARKS["no"]
