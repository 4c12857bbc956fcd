"""The shape issue 38 asks of the claims and facts code (item 6), read from the source: every
threshold is named once (a test's threshold is a name, or the neutral 0 or 1 of a difference or
a ratio), there is one verdict rule (only :mod:`dynamics.evidence` turns numbers into "yes",
"partly" or "no"; no theme writes a verdict of its own), and no claims or facts module reaches
into a private helper of its theme's figures, panels, experiments or science. Each rule is
shown to see a violation written for it."""
import ast
from pathlib import Path

import pytest

import dynamics

LIB = Path(dynamics.__file__).resolve().parent
VERDICTS = {"yes", "partly", "no", "within noise", "does not discriminate", "not at this scale"}
NEUTRAL = {0, 1}  # a difference's and a ratio's own zero: no threshold to name
PRESENTATION = {"claims", "facts"}  # a theme's claims and facts may share private helpers


def _modules():
    return sorted(p for p in LIB.rglob("*.py") if "dynamics_" not in str(p))


def unnamed_thresholds(source: str) -> list[str]:
    """The ``Test(op, threshold, ...)`` calls whose threshold is a number written in place
    (other than the neutral 0 and 1)."""
    out = []
    for n in ast.walk(ast.parse(source)):
        if not (isinstance(n, ast.Call) and len(n.args) >= 2):
            continue
        name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
        if name != "Test":
            continue
        t = n.args[1]
        if isinstance(t, ast.UnaryOp):
            t = t.operand
        if isinstance(t, ast.Constant) and t.value not in NEUTRAL:
            out.append(f"line {n.lineno}: Test(..., {ast.unparse(n.args[1])}, ...)")
    return out


def verdicts_written(source: str) -> list[str]:
    """The places a verdict word is produced rather than read: returned, chosen by a
    conditional expression, or handed to a row's ``reproduced``."""
    out = []

    def verdict(node) -> bool:
        return isinstance(node, ast.Constant) and node.value in VERDICTS

    for n in ast.walk(ast.parse(source)):
        hits = []
        if isinstance(n, ast.Return) and verdict(n.value):
            hits.append(n.value)
        elif isinstance(n, ast.IfExp):
            hits += [b for b in (n.body, n.orelse) if verdict(b)]
        elif isinstance(n, ast.Call):
            hits += [k.value for k in n.keywords if k.arg == "reproduced" and verdict(k.value)]
        elif isinstance(n, ast.Dict):
            hits += [v for k, v in zip(n.keys, n.values)
                     if isinstance(k, ast.Constant) and k.value == "reproduced" and verdict(v)]
        out += [f"line {h.lineno}: {h.value!r}" for h in hits]
    return out


def private_reaches(source: str, stem: str) -> list[str]:
    """The private names a claims or facts module imports from a module of its theme that is
    not claims or facts."""
    out = []
    if stem not in PRESENTATION:
        return out
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.ImportFrom) and n.level and n.module \
                and n.module.split(".")[-1] not in PRESENTATION:
            out += [f"line {n.lineno}: {n.module}.{a.name}" for a in n.names
                    if a.name.startswith("_")]
    return out


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(LIB)))
def test_every_threshold_is_named(path):
    assert unnamed_thresholds(path.read_text()) == []


def _claims_code():
    """The modules that write claims rows or the prose's verdicts: each theme's claims and facts
    and any module that judges a claim (a table's own "yes" cell elsewhere is no verdict)."""
    return [p for p in _modules() if p.parent != LIB and p.parent.name != "plots"
            and (p.stem in PRESENTATION or "evidence.judge(" in p.read_text()
                 or "evidence.Claim(" in p.read_text() or "plots.claim(" in p.read_text())]


@pytest.mark.parametrize("path", _claims_code(), ids=lambda p: str(p.relative_to(LIB)))
def test_only_the_engine_writes_a_verdict(path):
    assert verdicts_written(path.read_text()) == []


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(LIB)))
def test_no_claims_code_reaches_into_a_private_helper(path):
    assert private_reaches(path.read_text(), path.stem) == []


def test_the_plots_package_makes_no_verdict_of_its_own():
    """The old combiners (``verdict``, ``across_seeds``, ``judged``) are gone: a verdict comes
    from :func:`dynamics.evidence.verdict_of` alone."""
    from dynamics import plots

    assert not [n for n in ("verdict", "across_seeds", "judged") if hasattr(plots, n)]


def test_the_shape_rules_see_a_violation():
    assert unnamed_thresholds('T = evidence.Test("<", 0.05, "five percent")') == [
        'line 1: Test(..., 0.05, ...)']
    assert unnamed_thresholds('T = Test(">", -2, "x")') == ['line 1: Test(..., -2, ...)']
    assert unnamed_thresholds('T = Test("<", NC2_ETF, "x"); U = Test(">", 1.0, "ratio")') == []
    assert verdicts_written('def f(x):\n    return "yes" if x > 1 else "no"') == [
        "line 2: 'yes'", "line 2: 'no'"]
    assert verdicts_written('row = plots.claim("a", "b", "c", reproduced="partly")') == [
        "line 1: 'partly'"]
    assert verdicts_written('ok = row["reproduced"] == "yes"') == []
    assert private_reaches("from .figures import _helper, public", "claims") == [
        "line 1: figures._helper"]
    assert private_reaches("from .facts import _helper", "claims") == []
    assert private_reaches("from .figures import _helper", "panels") == []
