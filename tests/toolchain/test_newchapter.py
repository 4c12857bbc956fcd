"""python -m dynamics_toolchain.newchapter: a new chapter's files in one command, in a copy of the book."""
from __future__ import annotations

import importlib.util
import json
import shutil
import sys

import pytest

from dynamics_toolchain import newchapter
from dynamics.results import ROOT


@pytest.fixture
def book(tmp_path):
    for name in ("intro.md", "_toc.yml", "_config.yml"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "chapters").mkdir()
    (tmp_path / "lib" / "dynamics").mkdir(parents=True)
    shutil.copy(ROOT / "lib" / "dynamics" / "__init__.py", tmp_path / "lib" / "dynamics")
    return tmp_path


def test_a_new_chapter_has_what_every_chapter_has(book, monkeypatch):
    paths = newchapter.create("sharpness", "sharpness", "Edge of stability", "Why 2/η?", root=book)
    assert book / "chapters" / "sharpness.ipynb" in paths
    nb = json.loads((book / "chapters" / "sharpness.ipynb").read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert code[0].startswith("# Colab setup") and 'dynamics.setup(chapter="sharpness")' in code[1]
    assert code[2] == 'dynamics.book.live_cost("sharpness")'
    assert all(not c.get("outputs") for c in nb["cells"])
    toc = (book / "_toc.yml").read_text()
    assert toc.index("chapters/sharpness") < toc.index("chapters/one_network")  # capstone last
    init = (book / "lib" / "dynamics" / "__init__.py").read_text()
    assert init.index('"sharpness": "sharpness"') < init.index('"one_network": "capstone"')
    assert "| [Edge of stability](chapters/sharpness.ipynb) | Why 2/η? |" in (book / "intro.md").read_text()
    assert (book / "tests" / "sharpness" / "known_answers.py").read_text().count("NOT_MEASURES = {}") == 1
    # the package follows the template and imports; its claims are left to the author, loudly
    folder = book / "lib" / "dynamics" / "sharpness"
    spec = importlib.util.spec_from_file_location("new_theme", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    theme = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "new_theme", theme)
    spec.loader.exec_module(theme)
    assert theme.__all__ == []  # the notebook calls nothing yet (tests/test_surface.py)
    claims = importlib.import_module("new_theme.claims")
    for unwritten in (claims.published_claims, claims.page_claims):
        with pytest.raises(NotImplementedError, match="claims"):
            unwritten()
    with pytest.raises(ValueError, match="exists"):
        newchapter.create("sharpness", "other", "Again", root=book)
    with pytest.raises(ValueError, match="identifier"):
        newchapter.create("Bad-Name", "bad", "Bad", root=book)


def test_the_package_template_is_the_layout_tests():
    """The __init__ it writes is the one tests/test_layout.py holds every theme to."""
    spec = importlib.util.spec_from_file_location("layout", ROOT / "tests" / "test_layout.py")
    layout = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layout)
    assert not layout.init_departures('"""A new chapter."""\n' + newchapter._INIT_TAIL)
