"""The one generic test over every theme's claims rows (issue 38): a row is judged by the
claims engine, its verdict follows from the numbers it carries, and an asserted row says yes
on its data while its control fails the same test on every seed.

The published rows (each theme's ``published_claims()``, on ``data/``) are checked here; the
live rows are checked wherever a page renders them, at smoke under nbmake and in the strict
cpu build, because :func:`dynamics.plots.claims_table` audits every row it is given
(:func:`dynamics.evidence.audit`). The rows not yet moved onto the engine are named in
:data:`dynamics.evidence.NOT_YET_JUDGED`, a list that can only shrink."""
import importlib
import re
from pathlib import Path

import pytest

from dynamics import CHAPTERS, evidence, plots
from dynamics.evidence import Claim, Test, judge
from known import known_answer

LIB = Path(evidence.__file__).resolve().parent


def lead(test=Test(">", 1.0, "LEAD"), **kw):
    return Claim("A leads B", "someone2024", measure=lambda run: run, test=test,
                 control="B measured the same way", window="the whole run", **kw)


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_every_published_row_is_judged_and_its_verdict_follows_from_its_numbers(chapter):
    rows = importlib.import_module(f"dynamics.{CHAPTERS[chapter]}.claims").published_claims()
    assert evidence.audit(rows) == [], chapter
    for r in rows:
        if not r["evidence"]:
            continue
        for part in r["evidence"]:
            test = Test(**part["test"])
            assert set(part["treatment"]) == set(part["control"]) and len(part["treatment"]) >= 1
            if r["asserted"]:
                # an asserted row says yes: on every seed its treatment passes the test and its
                # control fails it
                assert r["reproduced"] == "yes", r["claim"]
                assert all(test.passes(v) for v in part["treatment"].values()), r["claim"]
                assert not any(test.passes(v) for v in part["control"].values()), r["claim"]


def test_every_row_of_every_chapter_is_on_the_engine():
    """The ledger of rows judged by hand is empty: a row added without the engine's numbers is
    refused wherever a table renders it (the last three moved in the change that emptied it)."""
    assert evidence.NOT_YET_JUDGED == {}


def test_the_ledger_of_rows_not_yet_on_the_engine_names_only_rows_still_written():
    """Each entry of NOT_YET_JUDGED opens a statement still in its theme's code (an entry whose
    row moved onto the engine must be deleted), and no entry is in two themes."""
    seen = set()
    for theme, starts in evidence.NOT_YET_JUDGED.items():
        assert (LIB / theme).is_dir(), f"NOT_YET_JUDGED: no theme {theme!r}"
        source = "\n".join(p.read_text() for p in (LIB / theme).glob("*.py"))
        flat = re.sub(r'"\s*\n\s*(f?)"', "", source)  # adjacent string literals joined
        for start in starts:
            head = start.split(": ", 1)[-1] if start.split(": ", 1)[0] in _labels() else start
            assert head[:24] in flat, f"NOT_YET_JUDGED[{theme!r}]: no statement opens {start!r}"
            assert start not in seen, f"NOT_YET_JUDGED: {start!r} twice"
            seen.add(start)


def _labels():
    from dynamics.weight_decay.experiments import LABELS
    return set(LABELS.values())


@known_answer(evidence.audit, how="constructed rows: a judged row passes; the same row with its "
                                  "verdict edited, a row with no numbers that the ledger does not "
                                  "name, and a part whose control lacks a seed are each refused")
def test_audit_refuses_a_row_that_could_pass_by_construction():
    good = judge(lead(), {0: 2.0, 1: 2.1, 2: 2.2}, {0: 0.5, 1: 0.6, 2: 0.5}).row()
    assert good["reproduced"] == "yes" and evidence.audit([good]) == []
    edited = dict(judge(lead(), {0: 2.0, 1: 2.1, 2: 2.2}, {0: 0.5, 1: 1.6, 2: 0.5}).row(),
                  reproduced="yes")  # the engine said "does not discriminate"
    assert "its parts give 'does not discriminate'" in evidence.audit([edited])[0]
    handed = plots.claim("A brand-new claim with a verdict handed in", "someone2024", "2.0", "yes")
    assert "not judged by the claims engine" in evidence.audit([handed])[0]
    part = dict(good["evidence"][0], verdict="no")
    assert "numbers give 'yes'" in evidence.audit([dict(good, evidence=[part])])[0]
    lost = dict(good["evidence"][0], control={0: 0.5, 1: 0.6})
    assert any("not measured on the treatment's seeds" in p
               for p in evidence.audit([dict(good, evidence=[lost])]))
    with pytest.raises(evidence.ClaimNotJudged, match="brand-new claim"):
        plots.claims_table([good, handed])


@known_answer(evidence.constant, how="constructed controls: the same number on three seeds is "
                                     "a constant; one seed, two values, or an unreached (None) "
                                     "seed is not")
def test_an_asserted_row_whose_control_no_seed_moves_must_say_why():
    assert evidence.constant({0: 1.0, 1: 1.0, 2: 1.0}) == 1.0
    assert evidence.constant({0: 1.0}) is None
    assert evidence.constant({0: 1.0, 1: 1.0000001}) is None
    assert evidence.constant({0: None, 1: None}) is None
    # the theory's number in the control's place, the same on every seed: refused as it is
    fixed = judge(lead(), {0: 2.0, 1: 2.1, 2: 2.2}, {0: 0.5, 1: 0.5, 2: 0.5}).row()
    assert fixed["reproduced"] == "yes"
    (problem,) = evidence.audit([fixed])
    assert "control is 0.5 on every seed" in problem and "constant_control" in problem
    # shown, not asserted: the page says what it is; no verdict rests on it
    assert evidence.audit([dict(fixed, asserted=False)]) == []
    # said why, and printed beside the control
    why = "the theory's number: B's closed form, the same on every seed"
    said = judge(lead(constant_control=why), {0: 2.0, 1: 2.1, 2: 2.2},
                 {0: 0.5, 1: 0.5, 2: 0.5}).row()
    assert evidence.audit([said]) == [] and why in said["control"]
    # a control that varies needs no word
    assert evidence.audit([judge(lead(), {0: 2.0, 1: 2.1, 2: 2.2},
                                 {0: 0.5, 1: 0.6, 2: 0.5}).row()]) == []


@known_answer(evidence.no_control, how="constructed rows: a treatment that passes with no "
                                       "control to fail is 'does not discriminate', never yes; "
                                       "one that fails is 'no'; the audit reads the mark back")
def test_a_row_with_no_control_cannot_say_yes():
    none = judge(lead(control_measure=evidence.no_control), {0: 2.0, 1: 2.1, 2: 2.2},
                 {0: 0, 1: 0, 2: 0})
    assert none.verdict == "does not discriminate" and "no control measured" in none.reason
    assert "holds on" not in none.reason  # every seed passes: nothing more to say
    # where it passes on some seeds only, the reason says on how many (the verdict cannot)
    some = judge(lead(control_measure=evidence.no_control), {0: 2.0, 1: 0.5, 2: 2.2},
                 {0: 0, 1: 0, 2: 0})
    assert some.verdict == "does not discriminate" and some.reason.endswith("it holds on 2 of 3")
    row = none.row()
    assert row["evidence"][0]["no_control"] and evidence.audit([row]) == []
    edited = dict(row, reproduced="yes", evidence=[dict(row["evidence"][0], verdict="yes")])
    assert any("numbers give 'does not discriminate'" in p for p in evidence.audit([edited]))
    assert judge(lead(control_measure=evidence.no_control), {0: 0.2, 1: 0.1},
                 {0: 0, 1: 0}).verdict == "no"
    # a control that never reached a number (NaN) is a miss, as before: the mark is explicit
    assert judge(lead(), {0: 2.0, 1: 2.1, 2: 2.2},
                 {0: float("nan"), 1: float("nan"), 2: float("nan")}).verdict == "yes"


@known_answer(evidence.joint, how="constructed parts: two yes parts give yes; a part whose "
                                  "control passes makes the row 'does not discriminate', and both "
                                  "parts' numbers are kept")
def test_one_claim_in_several_parts_is_one_row():
    a = judge(lead(), {0: 2.0, 1: 2.1, 2: 2.2}, {0: 0.5, 1: 0.6, 2: 0.5})
    b = judge(lead(), {0: 3.0, 1: 3.1, 2: 3.3}, {0: 0.7, 1: 0.8, 2: 0.7})
    row = evidence.joint("A leads B in both settings", "someone2024", {"small": a, "large": b},
                         control="B in each setting", window="each whole run")
    assert row["reproduced"] == "yes" and [e["label"] for e in row["evidence"]] == ["small", "large"]
    assert "small median 2.1" in row["measured here"] and evidence.audit([row]) == []
    fooled = judge(lead(), {0: 2.0, 1: 2.1, 2: 2.2}, {0: 0.5, 1: 1.6, 2: 0.5})
    row = evidence.joint("A leads B in both settings", "someone2024", {"small": a, "large": fooled},
                         control="B in each setting", window="each whole run")
    assert row["reproduced"] == "does not discriminate" and evidence.audit([row]) == []
    shown = judge(lead(asserted=False), {0: 2.0, 1: 2.1, 2: 2.2}, {0: 0.5, 1: 0.6, 2: 0.5})
    with pytest.raises(ValueError, match="pass asserted=False"):
        evidence.joint("A leads B, shown", "someone2024", {"": shown}, control="B", window="w")
    assert not evidence.joint("A leads B, shown", "someone2024", {"": shown}, control="B",
                              window="w", asserted=False)["asserted"]
    with pytest.raises(ValueError, match="at least one judged part"):
        evidence.joint("x", "p", {}, control="c", window="w")


def test_a_control_read_on_the_treatments_own_runs_is_the_default():
    """``judge(claim, runs)``: the control measure reads the treatment's own runs (a run's value
    twice, here), exactly as ``judge(claim, runs, runs)`` does."""
    halved = lead(control_measure=lambda run: run / 4)
    runs = {0: 2.0, 1: 2.2, 2: 2.4}
    j = judge(halved, runs)
    assert j.control == {0: 0.5, 1: 0.55, 2: 0.6} and j.verdict == "yes"
    assert judge(halved, runs).row() == judge(halved, runs, runs).row()


def test_a_labelled_row_is_a_one_part_joint_row_with_the_claims_own_words():
    """``labelled``: the claim's statement, paper, control, window and assertion, one part named
    by ``label``, and ``note`` after the measurement: the row ``joint`` gives when written out."""
    a, b = {0: 2.0, 1: 2.1, 2: 2.2}, {0: 0.5, 1: 0.6, 2: 0.5}
    c = lead()
    row = evidence.labelled(c, a, b, label="per seed:", note="seed-averaged: 2.1")
    assert row == evidence.joint(c.statement, c.paper, {"per seed:": judge(c, a, b)},
                                 control=c.control, window=c.window, note="seed-averaged: 2.1")
    assert row["measured here"].startswith("per seed: median 2.1")
    assert row["measured here"].endswith("; seed-averaged: 2.1") and row["reproduced"] == "yes"
    assert not evidence.labelled(lead(asserted=False), a, b)["asserted"]


def test_and_list_joins_as_prose_does():
    """The one home of "a, b and c" (``dynamics.book.and_list``), which the claims and facts
    of several chapters print."""
    from dynamics.book import and_list
    assert and_list(["a", "b", "c"]) == "a, b and c"
    assert and_list(["a", "b"]) == "a and b" and and_list(["a"]) == "a" and and_list([]) == ""
    assert and_list(x for x in (1, 2.5)) == "1 and 2.5"
