"""Start a new chapter in one command (the first step of CONTRIBUTING.md's "Adding a chapter").

    python -m dynamics_toolchain.newchapter sharpness sharpness "Edge of stability" \\
        --question "Why does the sharpness stop at 2/η?"

writes what every chapter has, so that the rest is the chapter's own science and prose:

- ``chapters/<chapter>.ipynb``: the Colab cell, a title, ``dynamics.setup(chapter=...)`` and the cost line;
- ``lib/dynamics/<theme>/``: the package from the template every theme follows
  (``__init__`` and its five modules, each with its ``__all__``; ``claims.page_claims`` and
  ``claims.published_claims`` to fill in; the package's own ``__all__`` starts empty and lists what the notebook calls);
- ``tests/<theme>/``: a folder for the chapter's tests, with its ``known_answers.py``;
- the chapter in ``_toc.yml``, ``dynamics.CHAPTERS`` and the landing page's table, before the
  capstone (which stays last).

It refuses a chapter or theme that exists. What it cannot write, the generic tests then ask for
by name (the claims on the published data, the measured cost line, the notebook's checks).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from dynamics.results import ROOT

_MODULES = {
    "science": "the method itself: configs, models, measures (no plotting, no training loops).",
    "experiments": "the chapter's runs (``run``) and, if it precomputes, ``precompute_plan``.",
    "figures": "static figures, sliders and tables.",
    "panels": "live panels (``*_panel``): a figure the reader re-runs with widgets.",
    "claims": "the page's numbers and the claims table (``claims``, ``published_claims``).",
}
# after the docstring: the modules, then the names the notebook calls (none yet; add each
# with ``from .<module> import <name>`` and in ``__all__``: tests/test_surface.py)
_INIT_TAIL = """\
from . import claims, experiments, figures, panels, science

__all__ = []
"""
_CLAIMS = '''"""{title}: {doc}"""
from __future__ import annotations

__all__ = ["page_claims", "published_claims"]


def page_claims(*runs) -> list[dict]:
    """The page's claims table on its own runs: each row a :class:`dynamics.evidence.Claim`
    judged by :func:`dynamics.evidence.judge` on seeds 0-2 against a control that must fail the
    same test (``evidence.joint`` for a claim in several parts); ``plots.claims_table`` audits
    every row it renders."""
    raise NotImplementedError("{theme}: write the chapter's claims (see another theme's claims)")


def published_claims() -> list[dict]:
    """The claims table evaluated on the published (cpu) data in ``data/``, judged by the
    claims engine as :func:`page_claims` judges the page's runs; tests/test_published_claims.py
    and tests/test_claims_engine.py check every row."""
    raise NotImplementedError("{theme}: write the chapter's claims (see another theme's claims)")
'''
# the tests folder starts with the file tests/test_known_answers.py reads: the public
# functions of the measure modules that compute nothing the page reports
_KNOWN = '''"""Public functions of {theme}'s measure modules that compute no quantity the page
reports (tests/known.py, tests/test_known_answers.py): each with its reason."""

NOT_MEASURES = {{}}
'''


def _name(value: str, what: str) -> str:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", value):
        raise ValueError(f"{what} must be a lower-case Python identifier, got {value!r}")
    return value


def _notebook(chapter: str, theme: str, title: str) -> dict:
    import nbformat

    from .colab import colab_cell, repository_url

    alias = "".join(w[0] for w in theme.split("_")).upper()
    cells = [
        nbformat.v4.new_code_cell(colab_cell(repository_url())),
        nbformat.v4.new_markdown_cell(f"# {title}\n"),
        nbformat.v4.new_code_cell(f"import dynamics\nfrom dynamics import {theme} as {alias}\n\n"
                                  f'rt = dynamics.setup(chapter="{chapter}")'),
        nbformat.v4.new_code_cell(f'dynamics.book.live_cost("{chapter}")'),
    ]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}})
    return nb


def create(chapter: str, theme: str, title: str, question: str = "", root: Path = ROOT) -> list[Path]:
    """Write the new chapter's files into the book at ``root``; returns the paths written or
    changed. Refuses a chapter or theme that exists."""
    import nbformat

    chapter, theme = _name(chapter, "chapter"), _name(theme, "theme")
    if not title.strip():
        raise ValueError("title must say what the chapter is called")
    notebook = root / "chapters" / f"{chapter}.ipynb"
    package = root / "lib" / "dynamics" / theme
    if notebook.exists() or package.exists():
        raise ValueError(f"{notebook if notebook.exists() else package} exists: pick another "
                         f"chapter or theme name")
    init = root / "lib" / "dynamics" / "__init__.py"
    text = init.read_text()
    anchor = '    "one_network": "capstone",\n'
    if anchor not in text:
        raise ValueError(f"{init}: no capstone entry in CHAPTERS to insert before")
    written = [init]
    init.write_text(text.replace(anchor, f'    "{chapter}": "{theme}",\n' + anchor))

    nbformat.write(_notebook(chapter, theme, title), notebook)
    written.append(notebook)
    package.mkdir(parents=True)
    doc = f"{title}: (say in a paragraph what the chapter shows, and from which papers)."
    listing = "\n".join(f"- :mod:`.{m}`: {what}" for m, what in _MODULES.items())
    (package / "__init__.py").write_text(f'"""{doc}\n\nModules:\n\n{listing}\n"""\n{_INIT_TAIL}')
    for module, what in _MODULES.items():
        path = package / f"{module}.py"
        path.write_text(_CLAIMS.format(title=title, doc=what, theme=theme) if module == "claims" else
                        f'"""{title}: {what}"""\nfrom __future__ import annotations\n\n__all__ = []\n')
        written.append(path)
    tests = root / "tests" / theme
    tests.mkdir(parents=True, exist_ok=True)
    (tests / "known_answers.py").write_text(_KNOWN.format(theme=theme))
    written.append(tests)

    toc = root / "_toc.yml"
    text = toc.read_text()
    last = "  - file: chapters/one_network\n"
    toc.write_text(text.replace(last, f"  - file: chapters/{chapter}\n" + last))
    written.append(toc)
    intro = root / "intro.md"
    text = intro.read_text()
    row = next((line for line in text.splitlines(keepends=True)
                if line.startswith("| [One network](chapters/one_network.ipynb)")), None)
    if row is not None:
        mine = f"| [{title}](chapters/{chapter}.ipynb) | {question or '(its question)'} | (what it shows) |\n"
        intro.write_text(text.replace(row, mine + row))
        written.append(intro)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dynamics_toolchain.newchapter",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("chapter", help="the notebook's name: chapters/<chapter>.ipynb")
    parser.add_argument("theme", help="the library package: lib/dynamics/<theme>/")
    parser.add_argument("title", help="the chapter's title")
    parser.add_argument("--question", default="", help="its question, for the landing page")
    args = parser.parse_args(argv)
    try:
        paths = create(args.chapter, args.theme, args.title, args.question)
    except ValueError as err:
        print(f"newchapter: {err}", file=sys.stderr)
        return 2
    for path in paths:
        print(f"wrote {Path(path).relative_to(ROOT)}")
    print(json.dumps({"next": "CONTRIBUTING.md, 'Adding a chapter', step 2"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
