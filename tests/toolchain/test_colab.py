"""Colab, rehearsed: the first cell every reader runs, and a chapter after it, in an
environment shaped like Colab's. Also figures in a local Jupyter with no network.

Three layers, fastest first:

- **The Colab cell** (``dynamics_toolchain.colab.colab_cell``), run as plain Python in a subprocess with a
  stand-in ``google.colab`` module, against a local copy of this repository that git reaches
  through ``url.<copy>.insteadOf = <the real URL>`` (so the cell's text is the one readers get):
  a fresh clone, a second run, an update, a stale or foreign folder, no network, no git.
- **The rehearsal** (``test_a_chapter_runs_on_colab_from_its_first_cell``): a virtual
  environment with what Colab preinstalls (:data:`COLAB`: torch already there, ipywidgets 7.7,
  plotly 5, ...), a kernel started the way Colab starts its kernels (``colab_kernel_launcher``,
  ``google.colab`` imported), the chapter :data:`CHAPTER` executed from its first cell in the
  smoke profile, one of its panels clicked as a browser would (Run button, training thread),
  and the widget tests run inside that environment. Colab's packages must come out unchanged.
  The environment is built with uv from PyPI (about a minute on a fresh machine) and kept
  under ``~/.cache/dynamics/colab-rehearsal`` for repeated local runs, restored to its
  pristine state (``uv pip sync``) before each use.
- **Figures offline** (``test_figures_draw_in_a_local_jupyter_without_network``): a notebook
  executed in a kernel, its outputs laid out as a notebook page, opened in Chromium with every
  request refused: the figures draw from the plotly.js that ``dynamics.setup()`` put there.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dynamics_toolchain.colab import REPO_DIR, colab_cell, repository_url

ROOT = Path(__file__).resolve().parents[2]
URL = repository_url()
CELL = colab_cell(URL)
CHAPTER = "spectral_optimizers"  # fast in smoke; any chapter works

# What Colab preinstalls that the library or its first cell touches, at Colab's versions
# (the Colab runtime of 2026-02: Python 3.12, torch 2.9, numpy 2.0.2, ...). Two things differ
# here, because only these can be had on this machine: Python is this interpreter's (3.11), and
# torch is the local CPU build the project pins (torch==2.13.0 from a local wheel), installed
# into the environment before anything else, as Colab's is.
COLAB = {
    "numpy": "2.0.2", "scipy": "1.16.3", "scikit-learn": "1.6.1", "plotly": "5.24.1",
    "ipywidgets": "7.7.1", "widgetsnbextension": "3.6.10", "notebook": "6.5.7",
    "ipykernel": "6.17.1", "ipython": "7.34.0", "tqdm": "4.67.3", "pyyaml": "6.0.3",
    "matplotlib": "3.10.0", "requests": "2.32.4", "sympy": "1.14.0", "networkx": "3.6.1",
}
EXTRA = ["pytest"]  # Colab has one too; its version does not matter here

# DYNAMICS_COLAB_VERSIONS=newest rehearses Colab's next upgrade before readers meet it: these
# at their newest releases (torch too), the rest as Colab has them. The weekly workflow
# (.github/workflows/colab.yml) runs the rehearsal both ways.
NEWEST = ("torch", "plotly", "ipywidgets", "widgetsnbextension")
VERSION_MODES = ("colab", "newest")


def version_mode() -> str:
    mode = os.environ.get("DYNAMICS_COLAB_VERSIONS", "colab").strip() or "colab"
    if mode not in VERSION_MODES:
        raise ValueError(f"DYNAMICS_COLAB_VERSIONS={mode!r}: choose one of {', '.join(VERSION_MODES)}")
    return mode


def pinned() -> dict:
    """The packages the rehearsal installs at a fixed version: all of :data:`COLAB`, or, with
    ``DYNAMICS_COLAB_VERSIONS=newest``, all but :data:`NEWEST`."""
    return {p: v for p, v in COLAB.items() if version_mode() == "colab" or p not in NEWEST}


def torch_spec() -> str:
    """torch as the rehearsal installs it: this interpreter's version (Colab's is preinstalled),
    or the newest release."""
    import torch

    return "torch" if version_mode() == "newest" else f"torch=={torch.__version__}"

def test_the_rehearsal_pins_colab_or_tries_the_newest_releases(monkeypatch):
    monkeypatch.delenv("DYNAMICS_COLAB_VERSIONS", raising=False)
    assert pinned() == COLAB and torch_spec().startswith("torch==")
    monkeypatch.setenv("DYNAMICS_COLAB_VERSIONS", "newest")
    assert torch_spec() == "torch" and not set(NEWEST) & set(pinned())
    assert pinned()["numpy"] == COLAB["numpy"]  # the rest stay as Colab has them
    monkeypatch.setenv("DYNAMICS_COLAB_VERSIONS", "latest")
    with pytest.raises(ValueError, match="DYNAMICS_COLAB_VERSIONS='latest'.*colab, newest"):
        pinned()


# ----------------------------------------------------------------------------- helpers


def _git(*args, cwd=None, env=None) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"git {' '.join(args)} failed: {out.stderr}")
    return out.stdout.strip()


def snapshot_remote(dest: Path) -> Path:
    """A git repository holding this working tree (tracked and new files, not ignored ones)
    as one commit on ``main``: what the cell will clone instead of GitHub."""
    files = _git("ls-files", "-co", "--exclude-standard", "-z", cwd=ROOT).split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    _git("init", "-q", "-b", "main", cwd=dest)
    _git("add", "-A", cwd=dest)
    _git("-c", "user.name=rehearsal", "-c", "user.email=rehearsal@localhost", "commit", "-q",
         "-m", "snapshot of the working tree", cwd=dest)
    return dest


def commit_file(repo: Path, name: str, text: str) -> None:
    (repo / name).write_text(text)
    _git("add", name, cwd=repo)
    _git("-c", "user.name=rehearsal", "-c", "user.email=rehearsal@localhost", "commit", "-q",
         "-m", f"add {name}", cwd=repo)


def git_env(tmp: Path, remote: Path, base=None) -> dict:
    """An environment in which git fetches ``URL`` from ``remote`` (a global config of its own)."""
    config = tmp / "gitconfig"
    config.write_text(f'[url "{remote.as_uri()}"]\n\tinsteadOf = {URL}\n'
                      '[advice]\n\tdetachedHead = false\n')
    env = dict(base if base is not None else os.environ)
    env.pop("PYTHONPATH", None)
    env.update(GIT_CONFIG_GLOBAL=str(config), GIT_CONFIG_NOSYSTEM="1")
    return env


# A Python process on "Colab": google.colab imported, subprocess.run and importlib's version()
# watched (the installed library is faked away on the first run), then the cell run N times.
RUNNER = textwrap.dedent('''
    import importlib.metadata, json, subprocess, sys, types
    sys.modules["google.colab"] = types.ModuleType("google.colab")
    calls, real_run, real_version, installed = [], subprocess.run, importlib.metadata.version, []
    def run(cmd, *a, **k):
        calls.append(" ".join(str(c) for c in cmd[:4]))
        if "pip" in cmd:  # the real install is what the rehearsal tests; here, record it
            installed.append(1)
            return subprocess.CompletedProcess(cmd, 0)
        return real_run(cmd, *a, **k)
    def version(name):
        if name == "dynamics" and not installed:
            raise importlib.metadata.PackageNotFoundError(name)
        return real_version(name)
    subprocess.run, importlib.metadata.version = run, version
    cell = open(sys.argv[1]).read()
    for _ in range(int(sys.argv[2])):
        exec(compile(cell, "colab-cell", "exec"), {"__name__": "__main__"})
    import dynamics
    print("RESULT " + json.dumps(dict(calls=calls, path=sys.path, dynamics=dynamics.__file__)))
''')


def run_cell(tmp: Path, env: dict, times: int = 1, colab: bool = True):
    (tmp / "cell.py").write_text(CELL)
    (tmp / "runner.py").write_text(RUNNER if colab else RUNNER.replace(
        'sys.modules["google.colab"] = types.ModuleType("google.colab")', ""))
    content = tmp / "content"
    content.mkdir(exist_ok=True)
    out = subprocess.run([sys.executable, str(tmp / "runner.py"), str(tmp / "cell.py"), str(times)],
                         cwd=content, env=env, capture_output=True, text=True, timeout=300)
    result = None
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
    return out, result


@pytest.fixture
def remote(tmp_path):
    (tmp_path / "remote").mkdir()
    return snapshot_remote(tmp_path / "remote")


# ----------------------------------------------------------------------------- the Colab cell


def test_every_chapter_starts_with_the_generated_cell():
    import nbformat

    from dynamics_toolchain.colab import write_colab_cells

    for nb in sorted((ROOT / "chapters").glob("*.ipynb")):
        first = next(c for c in nbformat.read(nb, as_version=4).cells if c.cell_type == "code")
        assert first.source == CELL, f"{nb.name}: run `python -m dynamics_toolchain colab-cells`"
    assert write_colab_cells() == []  # nothing left to rewrite


def test_cell_clones_installs_once_and_is_safe_to_run_twice(tmp_path, remote):
    out, res = run_cell(tmp_path, git_env(tmp_path, remote), times=2)
    assert out.returncode == 0, out.stderr
    clone = tmp_path / "content" / REPO_DIR
    lib = str(clone / "lib")
    assert res["path"].count(lib) == 1 and res["path"][0] == lib  # one entry, first
    assert res["dynamics"] == str(clone / "lib" / "dynamics" / "__init__.py")
    pips = [c for c in res["calls"] if "pip" in c]
    assert len(pips) == 1  # installed once, on the first run
    assert not any("torch" in c for c in res["calls"])
    git = [c for c in res["calls"] if c.startswith("git")]
    assert git[0].startswith("git clone --depth 1") and any("fetch" in c for c in git[1:])
    assert _git("config", "remote.origin.url", cwd=clone) == URL  # the reader's URL, not ours


def test_cell_updates_an_existing_clone(tmp_path, remote):
    env = git_env(tmp_path, remote)
    assert run_cell(tmp_path, env)[0].returncode == 0
    commit_file(remote, "NEWS.md", "something new\n")
    out, _ = run_cell(tmp_path, env)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "content" / REPO_DIR / "NEWS.md").read_text() == "something new\n"


def test_cell_carries_on_with_the_copy_it_has_when_it_cannot_update(tmp_path, remote):
    env = git_env(tmp_path, remote)
    assert run_cell(tmp_path, env)[0].returncode == 0
    shutil.rmtree(remote)  # offline, or the repository moved
    out, res = run_cell(tmp_path, env)
    assert out.returncode == 0, out.stderr
    assert f"could not update {REPO_DIR}/ (offline?): using it as it is; delete it to start afresh" in out.stdout
    assert res["dynamics"].startswith(str(tmp_path / "content" / REPO_DIR))


def test_cell_says_what_to_do_with_a_folder_that_is_not_the_clone(tmp_path, remote):
    env = git_env(tmp_path, remote)
    (tmp_path / "content" / REPO_DIR).mkdir(parents=True)  # empty, e.g. an upload went wrong
    out, _ = run_cell(tmp_path, env)
    assert out.returncode != 0
    assert (f"RuntimeError: {REPO_DIR}/ is not a clone of {URL}: delete or rename it, "
            "then run this cell again") in out.stderr
    other = tmp_path / "content" / REPO_DIR
    _git("init", "-q", cwd=other)
    _git("remote", "add", "origin", "https://github.com/someone/else", cwd=other)
    out, _ = run_cell(tmp_path, env)
    assert "is not a clone of" in out.stderr


def test_cell_says_what_to_do_without_git_or_network(tmp_path, remote):
    env = git_env(tmp_path, remote)
    out, _ = run_cell(tmp_path, dict(env, PATH=str(tmp_path / "nowhere")))
    assert "RuntimeError: git is missing: install it (apt-get install -y git), then run this cell again" in out.stderr
    offline = git_env(tmp_path, tmp_path / "no-such-repository")
    out, _ = run_cell(tmp_path, offline)
    assert f"RuntimeError: could not clone {URL}: check the connection, then run this cell again" in out.stderr


def test_cell_does_nothing_off_colab(tmp_path, remote):
    out, res = run_cell(tmp_path, git_env(tmp_path, remote), colab=False)
    assert out.returncode == 0, out.stderr
    assert res["calls"] == [] and not (tmp_path / "content" / REPO_DIR).exists()


# ----------------------------------------------------------------------------- the rehearsal

STANDINS = {
    "google/colab/__init__.py": '''\
        """Stand-in for Colab's google.colab (the book's Colab rehearsal). Colab imports this
        package when a kernel starts, which is how a notebook knows it runs there."""
        from . import output  # noqa: F401
        ''',
    "google/colab/output.py": '''\
        """What chapters could call on Colab's output module: widget managers (no-ops here)."""


        def enable_custom_widget_manager():
            pass


        def disable_custom_widget_manager():
            pass
        ''',
    "colab_kernel_launcher.py": '''\
        """Stand-in for Colab's kernel launcher: Colab starts kernels as
        ``python3 -m colab_kernel_launcher -f <connection file>``, google.colab imported."""
        import google.colab  # noqa: F401
        from ipykernel import kernelapp

        if __name__ == "__main__":
            kernelapp.launch_new_instance()
        ''',
}


def _find_links() -> list[str]:
    """pip's local wheel folders (where torch==2.13.0 lies on this machine), for uv too."""
    out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True)
    links = [v.strip("'") for k, v in (line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
             if k.endswith("find-links")]
    links += os.environ.get("PIP_FIND_LINKS", "").split()
    return [arg for link in dict.fromkeys(links) for arg in ("--find-links", link)]


class ColabEnv:
    """The rehearsal's virtual environment: Colab's preinstalled packages, the stand-ins,
    and a kernel spec that starts kernels the way Colab does."""

    def __init__(self, root: Path):
        self.root = root
        self.venv = root / "venv"
        self.python = self.venv / "bin" / "python"
        self.jupyter = root / "jupyter"
        self.freeze = root / "colab-freeze.txt"

    @classmethod
    def key(cls) -> str:
        import torch

        spec = json.dumps([pinned(), version_mode(), EXTRA, STANDINS, torch.__version__, sys.version],
                          sort_keys=True)
        return hashlib.sha256(spec.encode()).hexdigest()[:16]

    @staticmethod
    def uv(cache: Path) -> str:
        """uv (fast installs): on PATH, else installed once with pip into the cache."""
        found = shutil.which("uv")
        if found:
            return found
        tool = cache / "uv-tool"
        exe = tool / "bin" / "uv"
        if not exe.exists():
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(tool), "uv"],
                           check=True)
        return str(exe)

    def install_args(self) -> list[str]:
        return ["--python", str(self.python), *_find_links()]

    def build(self, uv: str) -> None:
        if self.root.exists():
            shutil.rmtree(self.root)
        self.root.mkdir(parents=True)
        subprocess.run([sys.executable, "-m", "venv", str(self.venv)], check=True)
        run = dict(check=True, capture_output=True, text=True)
        # torch first and alone, as Colab has it before anything else
        subprocess.run([uv, "pip", "install", *self.install_args(), torch_spec()], **run)
        torch_now = next((line for line in subprocess.run(  # kept as it came (Colab's upgrade)
            [uv, "pip", "freeze", "--python", str(self.python)], **run).stdout.splitlines()
            if line.lower().startswith("torch==")), torch_spec())
        newest = [p for p in NEWEST if p not in pinned() and p != "torch"]
        subprocess.run([uv, "pip", "install", *self.install_args(), torch_now,
                        *[f"{p}=={v}" for p, v in pinned().items()], *newest, *EXTRA], **run)
        site = Path(subprocess.run([str(self.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   **run).stdout.strip())
        for rel, text in STANDINS.items():
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            (site / rel).write_text(textwrap.dedent(text))
        spec = self.jupyter / "kernels" / "colab"
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps(dict(
            argv=[str(self.python), "-m", "colab_kernel_launcher", "-f", "{connection_file}"],
            display_name="Python 3 (Colab rehearsal)", language="python")))
        self.freeze.write_text(subprocess.run([uv, "pip", "freeze", "--python", str(self.python)],
                                              **run).stdout)

    def restore(self, uv: str) -> None:
        """Back to what Colab has: what an earlier rehearsal installed is removed."""
        subprocess.run([uv, "pip", "sync", *self.install_args(), str(self.freeze)],
                       check=True, capture_output=True, text=True)

    def versions(self) -> dict:
        code = ("import json, importlib.metadata as m; print(json.dumps({d.metadata['Name'].lower()"
                ".replace('_', '-'): d.version for d in m.distributions()}))")
        out = subprocess.run([str(self.python), "-c", code], capture_output=True, text=True, check=True,
                             env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
        return json.loads(out.stdout)


@pytest.fixture(scope="module")
def colab_env():
    cache = Path(os.environ.get("DYNAMICS_COLAB_CACHE", Path.home() / ".cache" / "dynamics" / "colab-rehearsal"))
    cache.mkdir(parents=True, exist_ok=True)
    uv = ColabEnv.uv(cache)
    env = ColabEnv(cache / ColabEnv.key())
    start = time.perf_counter()
    if env.freeze.exists():
        env.restore(uv)
    else:
        env.build(uv)
    print(f"\nColab rehearsal environment ready in {time.perf_counter() - start:.0f} s: {env.root}")
    return env


# Appended to the chapter: click its first panel as a browser would (the Run button's handler,
# a training thread), wait, and report what the reader would see.
CLICK = textwrap.dedent('''
    import json, sys, ipywidgets, torch
    import dynamics
    from dynamics import widgets
    found = widgets.panels()
    panel = found[0]
    panel.button.click()
    panel._thread.join(300)
    print("REHEARSAL " + json.dumps(dict(
        panels=len(found), status=panel.status.value, running=panel.running,
        run_enabled=not panel.button.disabled, stop_disabled=panel.stop_button.disabled,
        drew=sum("Plotly.newPlot" in o.get("data", {}).get("text/html", "") for o in panel.output.outputs),
        dynamics=dynamics.__file__, colab="google.colab" in sys.modules,
        lib_entries=sum(p.endswith("training-dynamics/lib") for p in sys.path),
        ipywidgets=ipywidgets.__version__, torch=torch.__version__)))
''')


@pytest.mark.colab
def test_a_chapter_runs_on_colab_from_its_first_cell(colab_env, tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    start = time.perf_counter()
    (tmp_path / "remote").mkdir()
    remote = snapshot_remote(tmp_path / "remote")
    content = tmp_path / "content"
    content.mkdir()
    before = colab_env.versions()
    assert {p: before.get(p) for p in pinned()} == pinned()

    nb = nbformat.read(ROOT / "chapters" / f"{CHAPTER}.ipynb", as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert first.source == CELL  # the very cell readers run
    nb.cells.append(nbformat.v4.new_code_cell(CLICK))
    env = git_env(tmp_path, remote)
    env["PATH"] = f"{colab_env.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    for name in ("DYNAMICS_PROGRESS", "DYNAMICS_DEVICE", "DYNAMICS_THREADS", "DYNAMICS_DRY_RUN",
                 "DYNAMICS_RESULTS_DIR", "DYNAMICS_BOOK_BUILD", "VIRTUAL_ENV"):
        env.pop(name, None)  # as on Colab: progress bars on (tqdm + ipywidgets 7.7), nothing forced
    env.update(DYNAMICS_PROFILE="smoke", DYNAMICS_SEED="0")
    monkeypatch.setenv("JUPYTER_PATH", str(colab_env.jupyter))
    client = NotebookClient(nb, kernel_name="colab", timeout=600, allow_errors=False,
                            resources={"metadata": {"path": str(content)}})
    client.execute(env=env)
    executed = time.perf_counter() - start

    # Colab's packages are as they were: the first cell added the library, changed nothing
    after = colab_env.versions()
    changed = {p: (v, after.get(p)) for p, v in before.items() if after.get(p) != v}
    assert changed == {}, f"the first cell changed Colab's packages: {changed}"
    assert "dynamics" in after and "mnist1d" in after

    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs
                   if o.get("output_type") == "stream")
    report = json.loads(text.split("REHEARSAL ", 1)[1].splitlines()[0])
    clone = content / REPO_DIR
    assert report["dynamics"] == str(clone / "lib" / "dynamics" / "__init__.py")
    assert report["colab"] and report["lib_entries"] == 1
    assert report["ipywidgets"] == before["ipywidgets"] and report["torch"] == before["torch"]
    assert report["panels"] >= 1 and not report["running"]
    # a run's own last word ("done", "diverged at ...", a measured value), never stuck or failed
    assert not report["status"].startswith(("running", "stopping", "failed", "invalid", "interrupted",
                                            "stopped", "press Run")), report["status"]
    assert report["drew"] >= 1 and report["run_enabled"] and report["stop_disabled"]
    views = sum("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert views >= report["panels"]  # every panel displayed as a widget under ipywidgets 7.7

    # the widget tests pass on Colab's ipywidgets too, run from the reader's clone
    tests = subprocess.run([str(colab_env.python), "-m", "pytest", "-q", "-o", "addopts=",
                            "-p", "no:cacheprovider", "tests/test_widgets.py"],
                           cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    print(f"\nrehearsal ({version_mode()} versions): chapter {CHAPTER} from its first cell in "
          f"{executed:.0f} s; widget tests on ipywidgets {before['ipywidgets']} in {time.perf_counter() - start - executed:.0f} s: "
          f"{tests.stdout.strip().splitlines()[-1]}")


# ----------------------------------------------------------------------------- figures, offline


def test_setup_loads_plotlyjs_once_in_a_local_kernel_only(monkeypatch):
    """The mimebundle ``dynamics.setup()`` displays: plotly.js from the installed package in a
    local Jupyter; nothing in a book build (the book serves its own) or on Colab (each output
    is its own frame there, so figures fetch plotly.js themselves)."""
    import types

    import IPython
    import IPython.display
    import plotly

    import dynamics

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: types.SimpleNamespace(kernel=object()))
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False: shown.append(obj))
    monkeypatch.delenv("DYNAMICS_BOOK_BUILD", raising=False)
    dynamics.setup()
    (bundle,) = shown
    html = bundle["text/html"]
    assert html.startswith('<script type="text/javascript">') and "var define, module, exports;" in html
    assert f"plotly.js v{plotly.offline.get_plotlyjs_version()}" in html and len(html) > 1_000_000
    monkeypatch.setenv("DYNAMICS_BOOK_BUILD", "1")
    dynamics.setup()
    monkeypatch.delenv("DYNAMICS_BOOK_BUILD")
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    dynamics.setup()
    assert len(shown) == 1


def _page(nb) -> str:
    """The executed notebook's outputs, in order, as one page (what a notebook front end shows)."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/html" in data:
                parts.append(f'<div class="output">{data["text/html"]}</div>')
            elif out.get("output_type") == "stream":
                parts.append(f"<pre>{out['text']}</pre>")
    return "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>" + "\n".join(parts) + "</body></html>"


def test_figures_draw_in_a_local_jupyter_without_network(tmp_path):
    import nbformat
    from nbclient import NotebookClient

    from dynamics_toolchain.pages import chromium

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import dynamics\nrt = dynamics.setup()"),
        nbformat.v4.new_code_cell("from dynamics import plots, train\n"
                                  "h = train.History(steps=[0, 1, 2], metrics={'loss': [1.0, 0.5, 0.2]})\n"
                                  "plots.curves(h, ['loss'], title='offline')"),
    ])
    pages = {}
    for name, book in (("jupyter", "0"), ("no-plotlyjs", "1")):  # the second: without the embed
        env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"), DYNAMICS_BOOK_BUILD=book,
                   DYNAMICS_PROFILE="smoke")
        run = nbformat.from_dict(json.loads(json.dumps(nb)))
        NotebookClient(run, kernel_name="python3", timeout=120).execute(env=env)
        pages[name] = tmp_path / f"{name}.html"
        pages[name].write_text(_page(run))

    from playwright.sync_api import sync_playwright

    drawn, refused = {}, []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()

        def route(r):
            if r.request.url.startswith("file:"):
                return r.continue_()
            refused.append(r.request.url)
            return r.abort()

        page.route("**/*", route)
        figures = "document.querySelectorAll('.dynamics-figure')"
        drawn_js = "document.querySelectorAll('.dynamics-figure .main-svg').length"
        page.goto(pages["jupyter"].as_uri(), wait_until="load")  # plotly.js inline: drawn at once
        page.wait_for_function(f"() => [...{figures}].every(g => g.querySelector('.main-svg'))")
        drawn["jupyter"] = page.evaluate(drawn_js)
        with page.expect_event("requestfailed", lambda r: "cdn.plot.ly" in r.url):  # the one way to draw
            page.goto(pages["no-plotlyjs"].as_uri(), wait_until="load")
        drawn["no-plotlyjs"] = page.evaluate(drawn_js)
        browser.close()
    assert drawn["jupyter"] >= 1  # drawn from the plotly.js setup() put in the notebook
    assert drawn["no-plotlyjs"] == 0 and any("cdn.plot.ly" in u for u in refused)  # the control
