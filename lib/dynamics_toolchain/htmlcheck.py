"""The built book read as HTML, without a browser: what a reader would see that is a bug and
not prose. ``python -m dynamics_toolchain.htmlcheck _build/html`` lists every page's problems and exits
with status 1 when there are any (:func:`check_dir`); :func:`check_page` checks one page.

A page fails on

- a Python value where prose or a table holds a value: a tuple (MyST-NB once read a glued
  "2,000" back as ``(2, 0)``) in a glued value, a table cell or a cell's HTML output;
  ``None``, ``nan`` or ``inf`` in a glued value, a table cell or a sentence (not the English
  "None of the runs ...", which starts a sentence and goes on);
- text the Markdown parser left as it was: a MyST role (``{cite}`key```), a directive fence
  (```` ```{note} ````), ``{glue``;
- an exercise without its question: a hint or an answer before any exercise, an exercise that
  is only its number and title, or exercise numbers that skip or repeat (1, 2, 4: the third
  lost its question, or all of it).

Only what a reader reads as text is read: the page's article (not the theme's navigation),
never scripts (plotly's JSON), styles, code (blocks, inline code, a cell's source or printed
lines), math or SVG. Hand-written prose may hold a tuple of its own ("(4, 5) a larger
learning rate"); a tuple is a Python value only where values are written by code. The
JavaScript console needs a browser: ``--console`` loads every page in Chromium as well, and the
rendered-book test reads it on each chapter page (:func:`dynamics_toolchain.pages.inspect_pages`).
"""
from __future__ import annotations

import re
from pathlib import Path

__all__ = ["check_dir", "check_page", "main"]

# what a reader never reads as prose: scripts, code, math, pictures
_SKIP_TAGS = {"script", "style", "pre", "svg", "math", "template", "textarea", "noscript",
              "mjx-container", "nav", "button"}
_SKIP_CLASSES = {"math", "cell_input", "highlight", "headerlink", "MathJax"}
_BLOCKS = {"p", "li", "td", "th", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "caption",
           "figcaption", "summary", "div", "blockquote", "section", "article", "details",
           "table", "thead", "tbody", "tr", "ul", "ol", "dl", "figure", "aside", "header",
           "footer", "main", "body"}
_CODE_START, _CODE_END, _GLUED = "\x01", "\x02", "\u25ca"  # inline code, a glued value's place

_NUM = r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?"
TUPLE = re.compile(rf"(?<![\w)\]])\((?:{_NUM}, )+{_NUM}\)|(?<![\w)\]])\({_NUM},\)")
NONE = re.compile(r"\bNone\b")
NAN_INF = re.compile(r"(?<![\w.-])-?(?:nan|inf)(?![\w])")
ROLE = re.compile(r"\{[A-Za-z][\w.+-]*(?::[\w.+-]+)*\}(?:`|" + _CODE_START + ")")
FENCE = re.compile(r"(?:```|:::)\s*\{[A-Za-z]")
EXERCISE_LABEL = re.compile(r"^(?:Exercise\s+)?(\d+)\.(?:\s|$)")
HELP = re.compile(r"^(?:hint|answer|worked answer|solution)\b", re.I)


def _soup(html: str):
    try:
        from bs4 import BeautifulSoup
    except ImportError:  # installed with jupyter-book (pydata-sphinx-theme needs it)
        raise RuntimeError("the HTML check needs beautifulsoup4: pip install beautifulsoup4") from None
    return BeautifulSoup(html, "html.parser")


def _skipped(tag) -> bool:
    return tag.name in _SKIP_TAGS or bool(_SKIP_CLASSES & set(tag.get("class") or ()))


def _blocks(article) -> list[tuple[str, str]]:
    """The article's text as (kind, text) blocks: "glued" (a ``{glue}`` value), "table" (a
    cell), "output" (text in a cell's output) or "prose". Inline code is kept as an empty pair
    of markers (a role's place), a glued value as one marker in its sentence."""
    from bs4 import NavigableString, Tag
    from bs4.element import PreformattedString

    out = []

    def walk(node, text: list[str], output: bool) -> None:
        for child in node.children:
            if isinstance(child, NavigableString):
                if not isinstance(child, PreformattedString):  # comments, CDATA, doctype
                    text.append(str(child))
            elif not isinstance(child, Tag):
                continue
            elif child.name == "code":
                text.append(_CODE_START + _CODE_END)
            elif _skipped(child):
                continue
            elif "pasted-text" in (child.get("class") or ()) or (
                    child.name == "span" and "output" in (child.get("class") or ())):
                out.append(("glued", child.get_text()))
                text.append(_GLUED)
            elif child.name in _BLOCKS:
                inner: list[str] = []
                here = output or bool({"cell_output", "output"} & set(child.get("class") or ()))
                walk(child, inner, here)
                kind = "table" if child.name in ("td", "th") else "output" if here else "prose"
                out.append((kind, " ".join("".join(inner).split())))
            else:
                walk(child, text, output)

    walk(article, [], False)
    return [(kind, text) for kind, text in out if text.strip()]


def _near(text: str, start: int, end: int) -> str:
    left, right = max(0, start - 40), min(len(text), end + 40)
    clip = text[left:right].replace(_GLUED, "…").replace(_CODE_START + _CODE_END, "`…`")
    return ("…" if left else "") + clip + ("…" if right < len(text) else "")


def _english_none(text: str, m) -> bool:
    """ "None of the runs", "None is": the word starts a sentence and one follows it."""
    before = text[:m.start()].rstrip(" \"'“‘([*_—–-")
    starts = not before or before[-1] in ".!?:;"
    return starts and re.match(r"\s+[A-Za-z]", text[m.end():]) is not None


def _values(kind: str, text: str) -> list[str]:
    words = text.replace(_CODE_START + _CODE_END, " ")
    found = []
    if kind != "prose":
        found += [f"a Python tuple {m.group()!r} in {_where(kind)}: {_near(words, *m.span())}"
                  for m in TUPLE.finditer(words)]
    found += [f"Python's None in {_where(kind)}: {_near(words, *m.span())}"
              for m in NONE.finditer(words) if kind == "glued" or not _english_none(words, m)]
    found += [f"{m.group()!r} (not a number) in {_where(kind)}: {_near(words, *m.span())}"
              for m in NAN_INF.finditer(words)]
    return found


def _where(kind: str) -> str:
    return {"glued": "a glued value", "table": "a table cell", "output": "a cell's output",
            "prose": "the text"}[kind]


def _unrendered(text: str) -> list[str]:
    found = [f"an unrendered MyST role: {_near(text, *m.span())}" for m in ROLE.finditer(text)]
    found += [f"an unrendered MyST directive: {_near(text, *m.span())}" for m in FENCE.finditer(text)]
    plain = text.replace(_CODE_START + _CODE_END, " ")
    if "{glue" in plain and not found:
        found.append(f"an unrendered glue: {_near(plain, plain.index('{glue'), plain.index('{glue') + 5)}")
    return found


def _exercises(article) -> list[str]:
    """Each section headed "Exercises": every exercise (a paragraph that starts with a bold
    "N." or "Exercise N.", or an item of a numbered list holding a hint or an answer) has a
    question besides its label (three words at least) before its hint and answer, the hints
    and answers follow an exercise, and the numbers run 1, 2, 3, ... ."""
    from bs4 import NavigableString, Tag

    problems = []
    for head in article.find_all(re.compile(r"^h[1-6]$")):
        if head.get_text(" ", strip=True).rstrip("#¶ ").strip().lower() != "exercises":
            continue
        exercises: list[dict] = []
        state = {"open": False}

        def label_of(p):
            first = next((c for c in p.children if not (isinstance(c, NavigableString)
                                                        and not c.strip())), None)
            if isinstance(first, Tag) and first.name == "strong":
                return first
            return None

        def start(number, label) -> None:
            # a title that asks ("**3. Which layers are pruned?**") is the question's first part
            title = EXERCISE_LABEL.sub("", label.get_text(" ", strip=True)) if label else ""
            exercises.append({"number": number, "question": [title] if title.endswith("?") else [],
                              "helps": 0, "skip": label})
            state["open"] = True

        def walk(node) -> None:
            for child in node.children:
                if isinstance(child, NavigableString):
                    if state["open"] and type(child) is NavigableString:
                        exercises[-1]["question"].append(str(child))
                    continue
                if not isinstance(child, Tag) or child.name in ("script", "style"):
                    continue
                if exercises and child is exercises[-1]["skip"]:
                    continue
                if child.name == "details":
                    summary = child.find("summary")
                    if summary is not None and HELP.match(summary.get_text(" ", strip=True)):
                        if not exercises:
                            problems.append(f"a {summary.get_text(' ', strip=True).lower()} "
                                            "before any exercise (its exercise has no question)")
                        else:
                            exercises[-1]["helps"] += 1
                        state["open"] = False
                    continue
                if "math" in (child.get("class") or ()) or child.name == "code":
                    if state["open"]:
                        exercises[-1]["question"].append(" (math) ")
                    continue
                if _skipped(child) or {"cell_output", "cell"} & set(child.get("class") or ()):
                    continue
                if child.name == "ol" and child.find_parent(["li", "details"]) is None:
                    first = int(child.get("start") or 1)
                    for i, item in enumerate(child.find_all("li", recursive=False)):
                        if item.find("details") is not None:
                            p = item.find("p")
                            start(first + i, label_of(p) if p is not None else None)
                        walk(item)
                    continue
                if child.name == "p" and child.find_parent(["li", "details"]) is None:
                    label = label_of(child)
                    m = label is not None and EXERCISE_LABEL.match(label.get_text(" ", strip=True))
                    if m:
                        start(int(m.group(1)), label)
                walk(child)

        walk(head.parent)
        for ex in exercises:
            words = re.findall(r"[A-Za-z]{2,}|\(math\)", "".join(ex["question"]))
            if len(words) < 3:
                problems.append(f"exercise {ex['number']} has no question, only its label")
        numbers = [ex["number"] for ex in exercises]
        if numbers and numbers[0] != 1:
            problems.append(f"the exercises start at {numbers[0]}, not 1")
        for a, b in zip(numbers, numbers[1:]):
            if b != a + 1:
                problems.append(f"the exercises go {a}, {b}: "
                                + ("a number repeats" if b <= a else
                                   f"exercise {a + 1}{'' if b == a + 2 else f'–{b - 1}'} is missing "
                                   "(its question is gone, or all of it)"))
    return problems


def check_page(html: str) -> list[str]:
    """The problems of one built page (its HTML); empty when there are none, or when the page
    has no article (a redirect)."""
    soup = _soup(html)
    article = soup.select_one("article.bd-article") or soup.find("main") or soup.find("article")
    if article is None:
        return []
    found = []
    for kind, text in _blocks(article):
        found += _unrendered(text) + _values(kind, text)
    found += _exercises(article)
    return list(dict.fromkeys(found))


def check_dir(html_dir) -> dict[str, list[str]]:
    """Every built page under ``html_dir`` (a Jupyter Book's ``_build/html``), by its path
    there, with its problems (an empty list: none). Raises ``FileNotFoundError`` where there
    is no page to check, so that a wrong folder does not pass."""
    html_dir = Path(html_dir)
    pages = sorted(p for p in html_dir.rglob("*.html")
                   if not {"_static", "_sources", "_images"} & set(p.relative_to(html_dir).parts))
    if not pages:
        raise FileNotFoundError(f"no built pages (*.html) under {html_dir}: give the book's "
                                "HTML folder, e.g. _build/html")
    return {p.relative_to(html_dir).as_posix(): check_page(p.read_text(encoding="utf-8"))
            for p in pages}


def main(argv=None) -> int:
    """``python -m dynamics_toolchain.htmlcheck HTML_DIR [--console]``: check every built page; with
    ``--console`` also load each in Chromium (:func:`dynamics_toolchain.pages.console_errors`) and fail
    on what its JavaScript console logs as an error. Prints each problem as ``page: problem``;
    exits 1 if there is any, 0 if there is none."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m dynamics_toolchain.htmlcheck", description=main.__doc__)
    parser.add_argument("html_dir", help="the built book's HTML folder, e.g. _build/html")
    parser.add_argument("--console", action="store_true",
                        help="also load every page in Chromium and fail on JavaScript console errors")
    args = parser.parse_args(argv)
    try:
        found = check_dir(args.html_dir)
    except FileNotFoundError as err:
        parser.error(str(err))
    if args.console:
        from .pages import console_errors

        for page, errors in console_errors(args.html_dir, list(found)).items():
            found[page] = found[page] + [f"JavaScript console error: {e}" for e in errors]
    bad = {page: ps for page, ps in found.items() if ps}
    for page, ps in bad.items():
        for p in ps:
            print(f"{page}: {p}")
    n = sum(map(len, bad.values()))
    print(f"checked {len(found)} pages: " + (f"{n} problems on {len(bad)} pages" if n else "no problems"))
    return 1 if n else 0


if __name__ == "__main__":
    raise SystemExit(main())
