"""Rules for the tests themselves (issue 40): no test, and none of the book's toolchain that the
tests drive in a browser, waits for a number of seconds.

A test that sleeps, or waits a fixed time in the browser, passes or fails with the machine's
speed: it waits for an event instead (a ``threading.Event``, a progress report, a condition the
page signals with ``wait_for_function``; see ``tests/stopping.py`` and
``dynamics_toolchain.scripts.FIGURES_DRAWN_JS``). Reads the files as text; runs nothing."""
import io
import re
import tokenize
from pathlib import Path

TESTS = Path(__file__).resolve().parent

# a wait for a number of seconds: time.sleep, asyncio.sleep, a bare sleep imported from time,
# Playwright's page.wait_for_timeout, and a threading.Timer (a Stop pressed after so many
# seconds races the run); strings count: a notebook cell a test runs is code
TIMED_WAIT = re.compile(r"\bsleep\s*\(|\bwait_for_timeout\s*\(|\bTimer\s*\(")

# file (relative to tests/) -> why its timed wait cannot be an event; keep it empty
ALLOWED: dict[str, str] = {}


def timed_waits(text: str) -> list[int]:
    """The lines (from 1) of Python ``text`` that wait for a number of seconds; comments
    excepted (a string's line is where it starts)."""
    code: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type != tokenize.COMMENT:
            code[tok.start[0]] = code.get(tok.start[0], "") + tok.string
    return sorted(n for n, line in code.items() if TIMED_WAIT.search(line))


# the book's toolchain, which the rendered-book test drives (pages, darkmode, access,
# printed): its waits are the tests' waits
TOOLCHAIN = TESTS.parent / "lib" / "dynamics_toolchain"


def test_no_test_waits_for_seconds():
    found = {}
    for path in [*sorted(TESTS.rglob("*.py")), *sorted(TOOLCHAIN.rglob("*.py"))]:
        name = path.relative_to(TESTS if path.is_relative_to(TESTS) else TESTS.parent).as_posix()
        lines = timed_waits(path.read_text())
        if lines and name not in ALLOWED:
            found[name] = lines
    assert not found, ("tests that wait for a number of seconds (wait for an event instead, "
                       f"or list the file in ALLOWED with the reason): {found}")
    for name, why in ALLOWED.items():  # an entry stays only while its file still needs it
        assert why.strip() and timed_waits((TESTS / name).read_text()), f"stale ALLOWED entry {name}"


def test_the_wait_rule_sees_a_timed_wait():
    nap = "sle" + "ep"  # built here, so that this file does not break its own rule
    assert timed_waits(f"import time\n\ntime.{nap}(1.5)\n") == [3]
    assert timed_waits(f"from time import {nap}\n{nap}(0.01)\n") == [2]
    assert timed_waits(f"    await asyncio.{nap}(1)\n") == [1]
    assert timed_waits(f'cell = "import time; time.{nap}(60)"\n') == [1]  # a cell's code
    assert timed_waits("page.wait_for_" + "timeout(800)\n") == [1]
    assert timed_waits("t = threading.Tim" + "er(0.3, panel.stop)\n") == [1]
    assert timed_waits("x = 1  # no time." + nap + "(1) here: a comment\n") == []
    assert timed_waits("page.wait_for_function(FIGURES_DRAWN_JS)\nstarted.wait(60)\n") == []
