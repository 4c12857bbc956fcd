"""The check of the built HTML (dynamics_toolchain.htmlcheck): a clean page of the book's kind passes,
with the math, code, plotly JSON, printed lines and English "None" a page holds; each problem
planted in it is found, and only that one."""
from __future__ import annotations

import pytest

from dynamics_toolchain import htmlcheck

DETAILS = ('<details><summary>Hint</summary><p>Look at the curve.</p></details>'
           '<details><summary>Worked answer</summary><p>It is <span class="pasted-text">2,000'
           '</span>.</p></details>')

# A page as Jupyter Book writes one (the markup of a real build), with what must not be taken
# for a problem: math, inline code and code cells, a cell's printed lines, plotly's JSON in a
# script, hand-written "(4, 5)", "None of ...", glued numbers with commas, and the three ways
# the chapters write exercises (a bold "N. Title.", a bold "Exercise N.", a numbered list).
CLEAN = """<html><head><script>const THEBE_JS_URL = "x";</script></head><body>
<nav class="bd-docs-nav"><p>None</p></nav>
<article class="bd-article"><section id="page"><h1>Page<a class="headerlink" href="#page">#</a></h1>
<p>None of the runs diverge; (4, 5) a larger learning rate. The step is
<span class="math notranslate nohighlight">\\((2, 0) = \\inf x, \\text{None}\\)</span>, the value
<code class="docutils literal notranslate"><span class="pre">None</span></code> means no decay.</p>
<p>It trains for <span class="pasted-text">2,000</span> steps at a rate of
<span class="pasted-text">0.100</span>, from <span class="pasted-text">1×10⁻⁵</span>, or
<span class="output text_html">6,218</span> in all.</p>
<div class="cell docutils container"><div class="cell_input docutils container"><div class="highlight">
<pre>print(None, float("nan"), (2, 0))  # {glue:text}`x`</pre></div></div>
<div class="cell_output docutils container"><div class="output stream highlight-myst-ansi">
<div class="highlight"><pre>None nan (2, 0) inf</pre></div></div>
<div class="output text_html"><div class="dynamics-figure" id="f1"></div>
<script>dynamicsFigure("f1", {"data": [{"y": [null, NaN, 1]}], "layout": {"title": "None (2, 0) nan {glue"}});</script>
<table><tr><th>claim</th><th>verdict</th></tr><tr><td>NC1 falls 2,000-fold</td><td>✓</td></tr>
<tr><td>None of the seeds groks late</td><td>✗</td></tr></table>
<p class="dynamics-panel-note">Moving the slider redraws the figure.</p></div></div></div>
<svg><text>None (2, 0)</text></svg>
<section id="exercises"><h2>Exercises<a class="headerlink" href="#exercises">#</a></h2>
<p>Each exercise has a hint and a worked answer.</p>
<p><strong>1. A title.</strong> What happens to the loss when the learning rate doubles?</p>
""" + DETAILS + """
<p><strong>Exercise 2.</strong> Derive the fixed point <span class="math">\\(q^*\\)</span> of the map.</p>
""" + DETAILS + """
<ol class="arabic" start="3"><li><p><strong>Listed.</strong> Which layer is pruned first, and why?</p>
""" + DETAILS + """</li></ol>
<!--PLANT-->
</section></section></article></body></html>"""


def test_a_clean_page_passes():
    assert htmlcheck.check_page(CLEAN) == []


PLANTED = {
    "glued tuple": ('<p>width 96, <span class="pasted-text">(2, 0)</span> SGD steps</p>',
                    "a Python tuple '(2, 0)' in a glued value"),
    "tuple in a table": ("<table><tr><td>(6, 218)</td></tr></table>",
                         "a Python tuple '(6, 218)' in a table cell"),
    "tuple in output": ('<div class="cell_output"><div class="output text_html"><p>NC1 keeps '
                        'falling (1, 0) times</p></div></div>', "in a cell's output"),
    "None in a table": ("<table><tr><td>Muon (η 0.05) at None</td><td>None</td></tr></table>",
                        "Python's None in a table cell"),
    "None in a sentence": ("<p>the grok step is None here.</p>", "Python's None in the text"),
    "glued None": ('<p><span class="pasted-text">None</span> of the runs</p>',
                   "Python's None in a glued value"),
    "nan": ("<p>the final loss is nan.</p>", "'nan' (not a number) in the text"),
    "inf": ("<table><tr><td>-inf</td></tr></table>", "'-inf' (not a number) in a table cell"),
    "raw role": ("<p>shown by {cite}`power2022` first</p>", "an unrendered MyST role"),
    "role before code": ('<p>see {ref}<code class="docutils literal"><span class="pre">lottery-imp'
                         '</span></code></p>', "an unrendered MyST role"),
    "raw glue": ("<p>after {glue:text}`t_grok` steps</p>", "an unrendered MyST role"),
    "glue name": ("<p>after {glue steps</p>", "an unrendered glue"),
    "directive": ("<p>```{note} Read this</p>", "an unrendered MyST directive"),
    "exercise without question": ("<p><strong>4. Muon.</strong></p>" + DETAILS,
                                  "exercise 4 has no question"),
    "exercise lost": ('<ol start="5"><li><p><strong>Test data.</strong> How much of the collapse '
                      "carries over to the test set?</p>" + DETAILS + "</li></ol>",
                      "exercise 4 is missing"),
    "numbers repeat": ("<p><strong>3. Again.</strong> Which layer is pruned first?</p>" + DETAILS,
                       "the exercises go 3, 3: a number repeats"),
}


@pytest.mark.parametrize("name", PLANTED)
def test_each_planted_problem_is_found_and_only_it(name):
    snippet, message = PLANTED[name]
    found = htmlcheck.check_page(CLEAN.replace("<!--PLANT-->", snippet))
    assert found and all(message in f for f in found), found


def test_a_question_may_be_its_bold_title():
    page = CLEAN.replace("<!--PLANT-->", "<p><strong>4. Which layers are pruned first, and why?"
                         "</strong></p>" + DETAILS)
    assert htmlcheck.check_page(page) == []
    assert "exercise 4 has no question" in htmlcheck.check_page(page.replace("first, and why?", ""))[0]


def test_a_hint_before_any_exercise_is_an_exercise_without_its_question():
    page = CLEAN.replace("<p>Each exercise has a hint and a worked answer.</p>",
                         "<p>Each exercise has a hint.</p>" + DETAILS)
    found = htmlcheck.check_page(page)
    assert found == [f"a {kind} before any exercise (its exercise has no question)"
                     for kind in ("hint", "worked answer")], found


def test_the_command_lists_the_problems_and_fails(tmp_path, capsys):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "intro.html").write_text(CLEAN)
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "bad.html").write_text(CLEAN.replace("2,000", "(2, 0)"))  # not a page
    assert htmlcheck.main([str(tmp_path)]) == 0
    assert "checked 1 pages: no problems" in capsys.readouterr().out
    (tmp_path / "chapters" / "grokking.html").write_text(CLEAN.replace("2,000", "(2, 0)"))
    assert htmlcheck.main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "chapters/grokking.html: a Python tuple '(2, 0)' in a glued value" in out
    assert "intro.html" not in out.replace("checked", "")
    with pytest.raises(SystemExit) as exit:
        htmlcheck.main([str(tmp_path / "nothing")])
    assert exit.value.code == 2 and "no built pages" in capsys.readouterr().err
