"""A number about the book's own runs appears in a chapter's prose only where the page computed
it: glued (``{glue:text}`name```, from :func:`dynamics.book.glue`), printed, drawn in a figure or
a row of the claims table. Typed by hand, it goes stale the day a preset, a seed or a profile
changes (the fidelity passes kept finding such slips), so this test refuses it.

What may stand in prose: numbers inside math (``$p = 113$``: a formula, a paper's setting or a
constant of the method), code spans, citations and glue; section and exercise numbers; years;
the digits 0-9 as words of a sentence ("two layers", "seed 0"); and numbers in a sentence that
cites its source with ``{cite}`` (a paper's figure, said with its reference). Anything else is in
:data:`ALLOWED`, each entry with the source it comes from.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))

# (chapter stem, number as written, source): numbers that are neither a run's nor a cited
# sentence's. Keep it short; every entry says where the number comes from.
ALLOWED: set[tuple[str, str, str]] = set()

CITE = "\u27e6cite\u27e7"  # stands for a citation role while sentences are cut
_STRIP = (
    r"```.*?```",                     # fenced blocks (bibliography directive, code)
    r"\$\$.*?\$\$",                   # display math
    r"\\begin\{(\w+\*?)\}.*?\\end\{\1\}",
    r"\$[^$\n]*\$",                   # inline math
    r"\{glue(?::\w+)?\}`[^`]*`",      # glued values
    r"\{(?:ref|numref|eq|doc|download)\}`[^`]*`",
    r"`[^`]*`",                       # code spans
    r"\]\([^)]*\)",                   # link targets
    r"<[^>]+>",                       # html tags
    r"^#+ [^\n]*$",                   # headings
    r"^\s*(?:[-*]|\d+\.)\s",          # list markers
    r"\*\*\d+(?:\.\d+)*\.?\*\*",      # exercise numbers, **1.**
)
NUMBER = re.compile(r"(?<![\w.,\u2212-])[-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?%|×)?(?![\w])")
FREE = re.compile(r"(?:19|20)\d\d|\d")  # years and single digits


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?;:])\s+|\n\s*\n", text) if s.strip()]


def typed_numbers(markdown: str) -> list[tuple[str, str]]:
    """The (number, sentence) pairs of ``markdown`` that no rule above allows."""
    text = re.sub(r"\{cite(?::\w+)?\}`[^`]*`", CITE, markdown)
    for pattern in _STRIP:
        text = re.sub(pattern, " ", text, flags=re.S | re.M)  # no pattern's "." may cross lines but fences
    found = []
    for sentence in _sentences(text):
        if CITE in sentence:
            continue
        for m in NUMBER.finditer(sentence):
            number = m.group(0).strip()
            core = number.lstrip("-\u2212").rstrip("%× ").strip()
            if FREE.fullmatch(core):
                continue
            found.append((number, " ".join(sentence.split())[:160]))
    return found


def chapter_markdown(path: Path) -> str:
    cells = json.loads(path.read_text())["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def test_the_check_catches_a_typed_run_number():
    assert typed_numbers("**What to notice.** The grok step is 1234 in this run.") == [
        ("1234", "**What to notice.** The grok step is 1234 in this run.")]
    assert [n for n, _ in typed_numbers("Test accuracy reaches 97% at 3,000 steps.")] == ["97%", "3,000"]
    assert [n for n, _ in typed_numbers("It ends at 0.25 here.")] == ["0.25"]


def test_the_check_lets_through_what_is_not_a_run_number():
    assert typed_numbers(
        "## 2. A phase diagram\n\n**1. The critical fraction.** In 2022 Power et al. saw it "
        "after $10^5$ steps {cite}`power2022`. We glue {glue:text}`t_grok` steps, with `lr=1e-3` "
        "and two seeds, 0 and 1. See [the paper](https://arxiv.org/abs/2201.02177).") == []


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_no_run_number_is_typed_into_the_prose(path):
    allowed = {(c, n) for c, n, _ in ALLOWED}
    typed = [(n, s) for n, s in typed_numbers(chapter_markdown(path)) if (path.stem, n) not in allowed]
    assert not typed, (f"{path.name}: {len(typed)} numbers typed into the prose (glue them with "
                       "dynamics.book.glue, cite their source, or move them into math):\n"
                       + "\n".join(f"  {n!r} in: {s}" for n, s in typed[:40]))


def test_every_allowed_number_names_its_source():
    for chapter, number, source in ALLOWED:
        assert (ROOT / "chapters" / f"{chapter}.ipynb").exists(), chapter
        assert NUMBER.fullmatch(number), number
        assert len(source.split()) >= 2, f"{chapter} {number}: say where it comes from"
