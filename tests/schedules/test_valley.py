"""dynamics.schedules.valley: the river-valley toy's noise floor against its closed form, the
exact expected loss against the noiseless closed form and against a large simulation, the
toy run's end against the closed form, the largest rise on a constructed curve, bad input."""
import numpy as np
import pytest

from known import known_answer

from dynamics.schedules import valley as V


@known_answer(V.stationary_loss, how="the fixed point of the variance recursion v = (1 - eta h)^2 v "
                                     "+ eta^2 sigma^2 h solved by hand at eta h = 1 (one step "
                                     "forgets: v = eta^2 sigma^2 h) and at eta h = 1/2 "
                                     "(v = 4/3 eta^2 sigma^2 h)")
def test_stationary_loss_at_hand_solved_rates():
    h, sigma = 2.0, 0.3
    eta = 1 / h                               # eta h = 1: v = eta^2 sigma^2 h, loss h v / 2
    assert V.stationary_loss(eta, h, sigma) == pytest.approx(h * eta ** 2 * sigma ** 2 * h / 2)
    eta = 0.25 / 1.0 * 2 / h                  # eta h = 1/2: v (1 - 1/4) = eta^2 sigma^2 h
    v = eta ** 2 * sigma ** 2 * h / 0.75
    assert V.stationary_loss(eta, h, sigma) == pytest.approx(h * v / 2)
    assert V.stationary_loss(0.3, 1.0, 0.0) == 0.0


@known_answer(V.expected_valley, how="without noise the iterate is (1 - eta h)^t w0 exactly, so "
                                     "the loss is h ((1 - eta h)^t w0)^2 / 2; with noise at a "
                                     "constant rate it tends to the closed-form floor "
                                     "eta sigma^2 h / (2 (2 - eta h))")
def test_expected_valley_on_closed_forms():
    h, w0 = np.array([1.0, 0.01]), np.array([2.0, -3.0])
    eta = 0.7
    e = V.expected_valley(np.full(50, eta), h, w0, sigma=0.0)
    t = np.arange(51)[:, None]
    assert e == pytest.approx(h * ((1 - eta * h) ** t * w0) ** 2 / 2, rel=1e-12)
    # a bouncing rate (eta h = 1.5 > 1): the floor, reached from any start
    e = V.expected_valley(np.full(400, 1.5), [1.0], [5.0], sigma=0.2)
    assert e[-1, 0] == pytest.approx(V.stationary_loss(1.5, 1.0, 0.2), rel=1e-9)
    assert e[-1, 0] == pytest.approx(1.5 * 0.04 / (2 * 0.5))
    # a rate schedule that changes: each step's factor enters as the product
    etas = np.array([0.5, 0.1, 0.9])
    e = V.expected_valley(etas, [1.0], [1.0], sigma=0.0)
    assert e[-1, 0] == pytest.approx(np.prod(1 - etas) ** 2 / 2)


@known_answer(V.simulate_valley, how="20 000 noisy replicas against the exact expected loss of "
                                     "the mean and variance recursions, within five standard "
                                     "errors at every tenth step (the recursions themselves are "
                                     "checked on closed forms above); without noise every "
                                     "replica is the deterministic (1 - eta h)^t w0")
def test_simulate_valley_against_exact_expectation():
    h, w0 = [1.0, 0.005], [0.5, 4.0]
    etas = np.r_[np.full(150, 1.5), np.linspace(1.5, 0, 50)]
    R = 20_000
    s = V.simulate_valley(etas, h, w0, sigma=0.3, replicas=R, seed=3)
    e = V.expected_valley(etas, h, w0, sigma=0.3)
    assert s["loss"].shape == e.shape == (201, 2) and s["path"].shape == (201, 2)
    # h w^2 / 2 of w ~ N(m, v) has sd (h / 2) sqrt(2 v^2 + 4 m^2 v) <= sqrt(2) x its
    # mean h (m^2 + v) / 2 (equal at m = 0, the hill): five standard errors of the mean
    tol = 5 * np.sqrt(2) * e / np.sqrt(R) + 1e-15
    assert np.all(np.abs(s["loss"][::10] - e[::10]) <= tol[::10])
    quiet = V.simulate_valley(np.full(30, 0.4), h, w0, sigma=0.0, replicas=3)
    t = np.arange(31)[:, None]
    assert quiet["path"] == pytest.approx((1 - 0.4 * np.array(h)) ** t * np.array(w0))


@known_answer(V.run_valley, how="the constant run's hill term at the end equals the closed-form "
                                "floor eta sigma^2 h / (2 (2 - eta h)) (600 steps at eta h = "
                                "1.5 forget any start: the mean shrinks by 0.5 a step); "
                                "the river's mean is w0 prod(1 - eta_t c), by hand for the "
                                "constant and the low rate")
def test_run_valley_on_closed_forms():
    r = V.run_valley(replicas=200)
    assert isinstance(r, V.Valley)
    c = r.config
    h, riv = c.curvatures
    assert r.expected["constant"][-1, 0] == pytest.approx(r.stationary["constant"])
    assert r.stationary["constant"] == pytest.approx(
        c.lr * c.sigma ** 2 * h / (2 * (2 - c.lr * h)))
    # the river's loss: the squared mean plus the variance's (small, quiet) part
    for name, lr in (("constant", c.lr), ("low constant", c.low)):
        mean = c.start[1] * (1 - lr * riv) ** c.steps
        assert r.expected[name][-1, 1] >= riv * mean ** 2 / 2
        assert r.expected[name][-1, 1] == pytest.approx(riv * mean ** 2 / 2, rel=0.05)
    # one noise stream: the WSD run is the constant one until its cooldown
    a = r.start
    assert np.array_equal(r.path["WSD"][: a + 1], r.path["constant"][: a + 1])
    assert not np.array_equal(r.path["WSD"][a + 2], r.path["constant"][a + 2])
    assert r.etas["WSD"][a - 1] == c.lr > r.etas["WSD"][a]
    s = r.summary
    assert s.hill_start == pytest.approx(r.stationary["constant"])
    drop = s.hill_start + s.river_start - s.hill_end - s.river_end
    assert s.hill_share == pytest.approx((s.hill_start - s.hill_end) / drop)


def _cooldown(seeds, steps, budgets, starts=(), train_loss=None, test_loss=None,
              averages=None, config=None):
    """A constructed run_cooldown result (what a test sets; the rest empty)."""
    from dynamics.schedules.experiments import Average, Cooldown
    from dynamics.schedules.science import CooldownConfig

    return Cooldown(names=[], seeds=list(seeds), steps=steps, budgets=budgets,
                    starts=list(starts), train_loss=train_loss or {}, test_loss=test_loss or {},
                    test_acc={}, etas={},
                    averages={s: {k: Average(**v) for k, v in a.items()}
                              for s, a in (averages or {}).items()},
                    config=config or CooldownConfig())


def _cooldown_like(constant, linear):
    steps = [0, 10, 20, 30, 40]
    return _cooldown([7], steps, [20, 40], [10, 30],
                     train_loss={7: {"constant": constant, "linear@20": linear[0],
                                     "linear@40": linear[1]}})


@known_answer(V.largest_rise, how="a constructed curve whose largest rise (0.5 -> 0.9, steps "
                                  "30 -> 40) and number of rises (2 of 4) are read by eye, "
                                  "inside the second cooldown's window only")
def test_largest_rise_on_a_constructed_curve():
    r = _cooldown_like([1.0, 0.8, 0.85, 0.5, 0.9],
                       ([1.0, 0.8, 0.7, 0.7, 0.7], [1.0, 0.8, 0.85, 0.5, 0.6]))
    out = V.largest_rise(r)
    assert (out.step_from, out.step_to) == (30, 40)
    assert (out.loss_from, out.loss_to) == (0.5, 0.9)
    assert (out.n_rises, out.n_pairs) == (2, 4)
    assert out.cooldowns == {40: (0.5, 0.6)}
    with pytest.raises(ValueError, match="seed"):
        V.largest_rise(r, seed=0)


@known_answer(V.valley_numbers, how="the glued floor is the closed form eta sigma^2 h / "
                                    "(2 (2 - eta h)) at the run's settings, and the hill's share "
                                    "is its drop over the whole drop, by hand from the summary")
def test_valley_numbers_on_the_closed_form():
    r = V.run_valley(replicas=10)
    c, s = r.config, r.summary
    g = V.valley_numbers(r)
    h = c.curvatures[0]
    assert g["vl_floor"] == f"{c.lr * c.sigma ** 2 * h / (2 * (2 - c.lr * h)):.2g}"
    share = (s.hill_start - s.hill_end) / (s.hill_start + s.river_start - s.hill_end - s.river_end)
    assert g["vl_share"] == f"{100 * share:.0f}%"
    assert g["vl_eta_h"] == f"{c.lr * h:g}" and g["vl_T"] == c.steps
    assert g["vl_hill_share"] == f"{s.hill_share:.2g}"   # every summary field, vl_<field>


@known_answer(V.cooldown_notes, how="a constructed two-seed run whose ratios are read by eye: "
                                    "constant / cosine 1.2 and 1.0 at the two budgets, 1-sqrt / "
                                    "linear 0.9 and 1.1 over the seeds, one rise of 0.4")
def test_cooldown_notes_on_a_constructed_run():
    r = _cooldown_like([1.0, 0.8, 0.85, 0.5, 0.9],
                       ([1.0, 0.8, 0.7, 0.7, 0.7], [1.0, 0.8, 0.85, 0.5, 0.6]))
    L = r.train_loss[7]
    L.update({"cosine@20": [1.0, 0.9, 0.85 / 1.2, 0.7, 0.7], "cosine@40": [1.0, 0.9, 0.8, 0.7, 0.9],
              "sqrt@40": [1.0, 0.8, 0.85, 0.5, 0.54]})
    other = {k: list(v) for k, v in L.items()}
    other["sqrt@40"] = [1.0, 0.8, 0.85, 0.5, 0.66]
    r.train_loss[8] = other
    r.seeds = [7, 8]
    r.config = r.config.replace(weight_decay=0.0, n_train=300)
    g = V.cooldown_notes(r, train_eval=1000)
    assert g["cd_const_each"] == "1.20, 1.00"
    assert (g["cd_sqrt_lo"], g["cd_sqrt_hi"]) == ("0.900", "1.100")
    assert g["cd_n_eval"] == 300 and g["cd_wd"] == "0"      # fewer examples than train_eval
    assert (g["cd_rise_a"], g["cd_rise_b"], g["cd_rise_lo"], g["cd_rise_hi"]) == (30, 40, "0.50", "0.90")
    assert g["cd_rise_cool"] == ("the linear cooldown to 40 steps, which branched off at a loss "
                                 "of 0.50, is at 0.60 there")
    assert V.cooldown_notes(r, train_eval=100)["cd_n_eval"] == 100
    r.config = r.config.replace(n_train=5000)  # more examples than the trainer measures on: its setting
    from dynamics.schedules import cooldown_notes
    from dynamics.schedules.experiments import TRAIN_EVAL, train_stacked
    assert train_stacked.__kwdefaults__["train_eval"] == TRAIN_EVAL
    assert cooldown_notes(r)["cd_n_eval"] == TRAIN_EVAL
    with pytest.raises(ValueError, match="train_eval"):
        V.cooldown_notes(r, train_eval=0)


@known_answer(V.test_loss_notes, how="a constructed two-budget run whose test losses are set "
              "by hand: the averages below the linear cooldown at both budgets and below the "
              "cosine at the second only; the constant run lowest at step 20, then rising")
def test_test_loss_notes_on_a_constructed_run():
    steps = [10, 20, 30, 40]
    test = {"constant": [1.0, 0.5, 0.7, 0.9], "linear@20": [1.0, 0.8, 0, 0],
            "cosine@20": [1.0, 0.6, 0, 0], "linear@40": [0, 0, 0, 0.8],
            "cosine@40": [0, 0, 0, 0.9]}
    av = lambda v20, v40: {"steps": [20, 40], "train_loss": [], "test_loss": [v20, v40]}
    r = _cooldown([0], steps, [20, 40], test_loss={0: test},
                  train_loss={0: {"constant": [2.0, 1.5, 1.2, 1.0]}},
                  averages={0: {"tail@20": av(0.7, 0), "tail@40": av(0, 0.6),
                                "ema": av(0.75, 0.65)}})
    g = V.test_loss_notes(r)
    assert g["cd_test_each"] == ("at 20 steps 0.70 and 0.75 against 0.80 and 0.60; "
                                 "at 40 steps 0.60 and 0.65 against 0.80 and 0.90")
    assert g["cd_test_avg_lin"] == "at every budget" and g["cd_test_avg_cos"] == "at 40 steps only"
    assert (g["cd_test_low"], g["cd_test_low_step"], g["cd_test_end"]) == ("0.50", 20, "0.90")
    assert (g["cd_train_at_low"], g["cd_train_end"]) == ("1.50", "1.00")
    assert V._budgets_text([1, 2], [False, False]) == "at no budget"
    with pytest.raises(ValueError, match="seed"):
        V.test_loss_notes(r, seed=3)


@known_answer(V.averaging_gap, how="a constructed section-1 run whose averaged constant rate is "
                                   "2x and then 3x the tuned cosine at the two horizons")
def test_averaging_gap_on_a_constructed_run():
    from dynamics.schedules.experiments import Anytime, Risks
    from dynamics.schedules.science import PowerLawConfig

    r = Anytime(names=["constant", "cos@4", "cos@8"], horizons=[4, 8], lr=0.1, gamma=0.5,
                seed=0, config=PowerLawConfig(),
                exact=Risks(tail=[[0.2, 0.3], [9, 9], [9, 9]],
                            last=[[9, 9], [0.1, 5.0], [7.0, 0.1]]))
    assert V.averaging_gap(r) == dict(av_pl_first="2.00", av_pl_last="3.00")


@pytest.mark.parametrize("call, match", [
    (lambda: V.expected_valley([2.5], [1.0], [0.0], 0.1), "eta \\* curvature"),
    (lambda: V.expected_valley([0.1], [0.0], [0.0], 0.1), "curvatures"),
    (lambda: V.expected_valley([0.1], [1.0, 0.1], [0.0], 0.1), "start"),
    (lambda: V.expected_valley([0.1], [1.0], [0.0], -1.0), "sigma"),
    (lambda: V.expected_valley([-0.1], [1.0], [0.0], 0.1), "etas"),
    (lambda: V.simulate_valley([0.1], [1.0], [0.0], 0.1, replicas=0), "replicas"),
    (lambda: V.simulate_valley([0.1], [1.0], [0.0], 0.1, replicas=2,
                               noise=np.zeros((1, 3, 1))), "noise"),
    (lambda: V.stationary_loss(2.0, 1.0, 0.1), "lr"),
    (lambda: V.stationary_loss(0.1, -1.0, 0.1), "curvature"),
    (lambda: V.run_valley(curvatures=(0.001, 1.0)), "curvatures"),
    (lambda: V.run_valley(low=2.0), "low"),
])
def test_bad_input_names_the_setting(call, match):
    with pytest.raises(ValueError, match=match):
        call()
