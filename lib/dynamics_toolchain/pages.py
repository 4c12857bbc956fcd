"""Building the book and looking at its pages: :func:`build` runs ``jupyter-book build`` in a
throwaway copy of the repository (all chapters or some, in a profile); :func:`inspect_pages`
opens the built chapter pages in the system Chromium (Playwright, no network) and reports what
a reader would see, :func:`problems` says what is wrong in a report, :func:`screenshots`
saves the first screen of each page, :func:`console_errors` lists what any page logs as an
error in its JavaScript console (``python -m dynamics_toolchain.htmlcheck --console``).
``python -m dynamics_toolchain build`` drives them. What they measure inside a page is in
``static/evaluate/`` (:func:`dynamics_toolchain.scripts.evaluate`).
"""
from __future__ import annotations

import math
import os
import re
import shutil
from pathlib import Path

from .scripts import FIGURES_DRAWN_JS, evaluate

__all__ = ["BOOK_COPY_IGNORE", "MIN_STEP", "build", "chromium", "PAGE_REPORT_JS", "MOVE_SLIDER_JS",
           "TAP_POINT_JS", "console_errors", "inspect_pages", "problems", "screenshots"]

# A finger's target: two steps of a slider on a phone must be at least this far apart (CSS px).
# WCAG 2.2's minimum target size (SC 2.5.8): 24 x 24 px, or targets spaced so that 24 px circles
# centred on them do not meet; a tap on a slider's rail picks the nearest step, so the steps'
# spacing is the target's width. (Apple and Google ask 44-48 px for a button: a slider of a
# dozen steps on a 390 px screen cannot give that, and dragging reaches every step anyway.)
MIN_STEP = 24

# what a throwaway copy of the book leaves out
BOOK_COPY_IGNORE = ("_build", ".git", ".venv", "*.egg-info", "__pycache__", ".pytest_cache")


def build(dest, chapters=None, profile: str = "smoke", strict: bool = True) -> Path:
    """Build the book (or only ``chapters``, by notebook name) in a copy at ``dest`` with
    ``jupyter-book build`` in ``profile``; return the HTML folder. ``strict``: warnings are
    errors, as in the tests. Raises ``RuntimeError`` with the build log's tail on failure."""
    import subprocess
    import sys

    import yaml

    from dynamics.results import ROOT

    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(*BOOK_COPY_IGNORE))
    if chapters:
        toc = yaml.safe_load((dest / "_toc.yml").read_text())
        wanted = [f"chapters/{c}" for c in chapters]
        unknown = set(wanted) - {e["file"] for e in toc["chapters"]}
        if unknown:
            raise ValueError(f"not chapters of the book: {sorted(unknown)}")
        toc["chapters"] = [e for e in toc["chapters"]  # the pages that are not chapters stay
                           if e["file"] in wanted or not e["file"].startswith("chapters/")]
        (dest / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    env = dict(os.environ, DYNAMICS_PROFILE=profile, DYNAMICS_PROGRESS="0")
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(dest)]
    if strict and not chapters:
        cmd += ["-W", "-n", "--keep-going"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    log = out.stdout + out.stderr
    if chapters and strict:  # links to the chapters left out are expected; any other warning is not
        left_out = re.compile(r"Unknown source document '/?chapters/|undefined label|"
                              r"document isn't included in any toctree")
        warnings = [line for line in log.splitlines() if "WARNING" in line and not left_out.search(line)
                    and "Kernel is running over TCP" not in line]
        if warnings:
            raise RuntimeError("book build warned (warnings are errors):\n" + "\n".join(warnings[-40:]))
    if out.returncode:
        raise RuntimeError(f"book build failed (exit {out.returncode}):\n" + log[-6000:])
    return dest / "_build" / "html"


def chromium() -> str:
    """The system Chromium (Debian's package), which the browser checks drive."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise RuntimeError("the browser checks need Chromium (Debian: apt-get install chromium)")


# What the checks run in a page (static/evaluate/<name>.js, each file says what it measures):
# what a reader sees, where a click moves a slider, a finger's tap and drag, a 3-D figure's
# scene and one of its points. The one-line expressions stay here.
PAGE_REPORT_JS = evaluate("page_report")
MOVE_SLIDER_JS = evaluate("move_slider")
TAP_POINT_JS = evaluate("tap_point")
SLIDER_TICKS_JS = evaluate("slider_ticks")
TURN_JS = evaluate("turn")
POINT_3D_JS = evaluate("point_3d")
# the camera a 3-D figure looks through (redraws round the last bits)
CAMERA_JS = ("(id) => { const e = document.getElementById(id)._fullLayout.scene._scene.getCamera().eye; "
             "return [e.x, e.y, e.z].map(v => v.toFixed(4)).join(' '); }")
# the hover a tap showed: 2-D figures draw it in their hover layer, 3-D ones in their scene
HOVER_JS = ("(id) => [...document.getElementById(id).querySelectorAll('.hoverlayer, .hovertext')]"
            ".map(e => e.textContent).join(' ').trim()")


# Waits are for events, never for a time: the page has drawn a frame (every handler of the
# input before it has run), a hover is shown, a camera has moved. A bounded wait for an event
# that does not come is what the report records (no hover, not turned), not an error.
FRAMES_JS = ("(n) => new Promise(done => { const next = k => k ? requestAnimationFrame(() => next(k - 1)) "
             ": done(true); next(n); })")
EVENT_MS = 5_000  # how long an awaited event may take before the report says it did not come


def _frames(page, n: int = 2) -> None:
    """Wait until the page has drawn ``n`` more frames: the input sent before has been handled
    and its result painted (plotly redraws on the next animation frame)."""
    page.evaluate(FRAMES_JS, n)


def _until(page, js: str, arg=None) -> bool:
    """Wait for ``js(arg)`` to be truthy in the page; False if it is not within EVENT_MS."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(js, arg=arg, timeout=EVENT_MS)
        return True
    except PlaywrightTimeout:
        return False


def _touch_drag(page, cdp, points) -> None:
    """One finger down at the first point, through the others (each move handled and drawn
    before the next, as a finger's moves come one frame apart), lifted at the last."""
    (x, y), *rest = points
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for x, y in rest:
        _frames(page, 1)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    _frames(page)


def _drag_sliders(page, cdp, figures) -> list[dict]:
    """A finger drags each figure's slider from its first step to its last, a quarter of the
    steps' spacing at a time: the steps it passed (every one, on a slider a finger can use)."""
    out, start = [], page.url.split("#")[0]
    for f in figures:
        if not f["slider"]:
            continue
        at = page.evaluate(SLIDER_TICKS_JS, f["id"])  # (scrolls the slider into view)
        _frames(page)
        at = page.evaluate(SLIDER_TICKS_JS, f["id"])  # where it is, once scrolled
        xs = at["xs"]
        gap = min((b - a for a, b in zip(xs, xs[1:])), default=4)
        n = max(2, math.ceil((xs[-1] - xs[0]) / max(3, gap / 4)))
        _touch_drag(page, cdp, [(xs[0] + (xs[-1] - xs[0]) * i / n, at["y"]) for i in range(n + 1)])
        if page.url.split("#")[0] != start:  # a sideways swipe the page took as "back" (it scrolls sideways)
            out.append(dict(id=f["id"], steps=len(xs), reached=0, left=True))
            break
        seen = page.evaluate(f"() => document.getElementById('{f['id']}')._dynamicsSeen.slice()")
        out.append(dict(id=f["id"], steps=len(xs), reached=len(set(seen) & set(range(len(xs))))))
    return out


def _turn_3d(page, cdp) -> dict | None:
    """A finger on the page's first 3-D figure: a drag across it turns the view (its camera
    moves), moving the figure's slider then keeps the view turned, and a tap on a point shows
    its hover. None where the page has no 3-D figure. (The slider comes before the tap: a tap
    sends the mouse events after which plotly keeps a turned view anyway.)"""
    at = page.evaluate(TURN_JS)  # (scrolls the scene into view)
    if at is None:
        return None
    _frames(page)
    at = page.evaluate(TURN_JS)
    before = page.evaluate(CAMERA_JS, at["id"])
    _touch_drag(page, cdp, [(at["x"] - at["w"] / 4 + at["w"] / 2 * i / 12, at["y"]) for i in range(13)])
    _until(page, f"([id, was]) => ({CAMERA_JS})(id) !== was", [at["id"], before])
    turned = page.evaluate(CAMERA_JS, at["id"])
    out = dict(id=at["id"], turned=turned != before, hover="", kept=None)
    # where a tap on the slider's rail lands: at its far end from ``to`` (null: from the step
    # it is at), or on step ``to`` (its place along the rail)
    rail_js = (f"(to) => {{ const e = document.getElementById('{at['id']}')"
               ".querySelector('.slider-rail-rect'); if (!e) return null; "
               "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); "
               "const s = e.closest('.dynamics-figure')._fullLayout.sliders[0]; "
               "if (to === null) return [s.active ? r.left + 4 : r.right - 4, r.top + r.height / 2]; "
               "const n = s.steps.length; "
               "return [r.left + 4 + (r.width - 8) * (n > 1 ? to / (n - 1) : 0), r.top + r.height / 2]; }")
    rail = page.evaluate(rail_js, None)
    if rail:
        active = f"(id) => document.getElementById(id)._fullLayout.sliders[0].active"
        was = page.evaluate(active, at["id"])
        page.touchscreen.tap(*rail)
        _until(page, f"([id, was]) => ({active})(id) !== was", [at["id"], was])  # the step moved
        _frames(page)  # and the figure redrawn
        out["kept"] = page.evaluate(CAMERA_JS, at["id"]) == turned
        # back to the step the figure opens at, where the tap below looks for a hover (at the
        # other end a figure may draw its points all in one place, e.g. at initialization)
        back = page.evaluate(rail_js, was)
        if back:
            page.touchscreen.tap(*back)
            _until(page, f"([id, was]) => ({active})(id) === was", [at["id"], was])
            _frames(page)
        page.evaluate(TURN_JS)  # the scene back in view
        _frames(page)
    for _ in range(3):  # a tap on a point; a reader whose tap shows nothing taps again
        point = page.evaluate(POINT_3D_JS, at["id"])
        if not point:
            break
        page.touchscreen.tap(point["x"], point["y"])
        # the scene picks the point under the finger on a later frame (a WebGL scene reads
        # the point from its picking buffer, which a first tap after a redraw can miss)
        if _until(page, f"(id) => ({HOVER_JS})(id)", at["id"]):
            break
    out["hover"] = page.evaluate(HOVER_JS, at["id"])
    return out


def _browser(pw):
    return pw.chromium.launch(executable_path=chromium(),
                              args=["--no-sandbox", "--disable-gpu", "--disable-quic",
                                    "--disable-background-networking"])


def _listen(page, errors: list) -> None:
    """Collect what a reader's browser logs as errors: console.error and uncaught exceptions."""
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught {e}"))


def console_errors(html_dir, pages) -> dict[str, list[str]]:
    """Each of ``pages`` (paths under ``html_dir``, any page of the book) loaded in Chromium
    with every non-file request refused: the errors its JavaScript console logs, and the
    requests to the network it tried (a page of the book makes none)."""
    from playwright.sync_api import sync_playwright

    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    out = {}
    with sync_playwright() as pw:
        browser = _browser(pw)
        for name in pages:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page, errors = context.new_page(), []
            _listen(page, errors)

            def route(r, errors=errors):
                if r.request.url.startswith(("file:", "data:", "blob:")):
                    return r.continue_()
                errors.append(f"a request to the network: {r.request.url}")
                r.abort()

            page.route("**/*", route)
            page.goto((Path(html_dir) / name).resolve().as_uri(), wait_until="load")
            # MathJax and the figures draw after the load: wait for both, not for seconds
            for _ in range(3):  # a page that sends the reader on (index.html) loads another
                try:
                    page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
                    page.wait_for_function(FIGURES_DRAWN_JS, timeout=120_000)
                    break
                except PlaywrightTimeout:
                    errors.append("a figure was not drawn within 120 s of the load")
                    break
                except PlaywrightError:  # the page navigated: wait for the next one to load
                    page.wait_for_load_state("load")
            out[name] = list(dict.fromkeys(errors))
            context.close()
        browser.close()
    return out


def inspect_pages(html_dir, pages=None, shots_dir=None, width: int = 1280, scheme: str = "light",
                  audit: bool = False) -> dict:
    """Open each chapter page (default: all) in the system Chromium through Playwright with
    every non-file request refused, in a window ``width`` px wide (under 500: a phone, 844 px
    high, with a touch screen), and report what a reader would see: elements wider than the
    article column, a page that scrolls sideways, raw TeX, figures not drawn, wider than the
    screen, or with two texts on top of each other (titles, subplot titles, legend, axis
    titles and ticks, annotations, slider labels, heatmap cell and bar labels) or cut off by
    the figure's edge, the Colab link, remote requests, errors in the JavaScript console
    (``console``: console.error and uncaught exceptions), and whether moving one slider redrew
    its figure. On a phone, with a finger: that slider tapped; a tap on a line plot shows its
    hover; every slider's steps at least :data:`MIN_STEP` px apart, and a drag along it passes
    every step (``dragged``); the first 3-D figure turns under a drag, shows a point's hover on
    a tap and stays turned when its slider moves (``turned_3d``). With ``shots_dir``, save a
    screenshot of each page's first screen there. ``scheme``: the system's colour scheme,
    "light" or "dark" (the book's theme follows it on a first visit). With ``audit``, the
    report's ``theme`` holds the page's colours in that theme
    (:data:`dynamics_toolchain.darkmode.THEME_REPORT_JS`, judged by ``theme_problems``) and
    axe-core's violations (``theme["audit"]``), read at the end of the same visit."""
    if scheme not in ("light", "dark"):
        raise ValueError(f"inspect_pages: scheme must be 'light' or 'dark', got {scheme!r}")
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    html_dir = Path(html_dir)
    pages = pages or sorted(p.stem for p in (html_dir / "chapters").glob("*.html"))
    reports = {}
    with sync_playwright() as pw:
        browser = _browser(pw)
        phone = width < 500  # a phone: its screen's height, a touch screen, the page's viewport tag
        height = 844 if phone else 900
        remote = []

        def route(r):
            if r.request.url.startswith(("file:", "data:", "blob:")):
                r.continue_()
            else:
                remote.append(r.request.url)
                r.abort()

        for name in pages:
            # one fresh page per chapter: a page that follows one with 3-D (WebGL) figures in
            # the same tab could hang in Chromium after the full-height screenshot's resize
            context = browser.new_context(viewport={"width": width, "height": height},
                                          is_mobile=phone, has_touch=phone, color_scheme=scheme)
            page = context.new_page()
            page.route("**/*", route)
            remote.clear()
            console = []
            _listen(page, console)
            page.goto((html_dir / "chapters" / f"{name}.html").as_uri(), wait_until="load")
            page.wait_for_function("() => !window.MathJax || !MathJax.startup || "
                                   "MathJax.startup.promise !== undefined", timeout=30000)
            page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
            page.evaluate("() => document.fonts.ready.then(() => true)")  # MathJax's web fonts
            try:  # every figure drawn (a figure that never draws is reported by the page report)
                page.wait_for_function(FIGURES_DRAWN_JS, timeout=120_000)
            except PlaywrightTimeout:
                pass
            report = page.evaluate(PAGE_REPORT_JS, {"phone": phone, "minStep": MIN_STEP})
            if shots_dir is not None:  # the page as a reader first sees it: before a slider moves
                # The first screen only: growing the window to the page's height for a
                # full-page shot made Chromium hang on pages with 3-D (WebGL) figures in the
                # steps after it, and a full-page capture of a page this tall fails.
                Path(shots_dir).mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(Path(shots_dir) / f"{name}.png"), timeout=60_000)
            if phone:  # a tap on a line shows its hover, as a mouse over it does
                tap = page.evaluate(TAP_POINT_JS)  # (scrolls the figure into view)
                if tap:
                    _frames(page)
                    tap = page.evaluate(TAP_POINT_JS)  # where the point is, once scrolled
                    page.touchscreen.tap(tap["x"], tap["y"])
                    shown = (f"() => document.getElementById('{tap['id']}')"
                             ".querySelector('.hoverlayer').textContent")
                    _until(page, shown)
                    tap["hover"] = page.evaluate(shown)
                report["tapped"] = tap
            move = page.evaluate(MOVE_SLIDER_JS)
            if move:
                if phone:
                    page.touchscreen.tap(move["x"], move["y"])
                else:
                    page.mouse.click(move["x"], move["y"])
                # redrawn: the traces shown change (waited for as an event, up to 10 s, not slept)
                before = move.pop("before")
                try:
                    page.wait_for_function("([id, was]) => JSON.stringify(document.getElementById(id)"
                                           ".data.map(t => t.visible)) !== JSON.stringify(was)",
                                           arg=[move["id"], before], timeout=10_000)
                    move["redrawn"] = True
                except PlaywrightTimeout:
                    move["redrawn"] = False
            report["slider_moved"] = move
            if phone:  # a finger drags every slider through all its steps, and turns a 3-D view
                cdp = context.new_cdp_session(page)
                report["dragged"] = _drag_sliders(page, cdp, report["figures"])
                report["turned_3d"] = _turn_3d(page, cdp)
            report["remote"] = list(remote)
            report["console"] = list(dict.fromkeys(console))
            if audit:  # the page in its theme, then axe-core's audit (last: axe reads the
                # stylesheets by requests that a file:// page's console reports as refused)
                from .access import audit as axe
                from .darkmode import THEME_REPORT_JS

                report["theme"] = page.evaluate(THEME_REPORT_JS)
                report["theme"]["audit"] = axe(page)
            reports[name] = report
            context.close()
        browser.close()
    return reports


def problems(report: dict) -> list[str]:
    """What is wrong on a page, from :func:`inspect_pages`'s report (empty: nothing)."""
    out = list(report["wide"])
    if report["rawTex"]:
        out.append(f"{report['rawTex']} raw TeX delimiters in the text (MathJax did not typeset)")
    for f in report["figures"]:
        if not f["drawn"]:
            out.append(f"figure {f['id']} was not drawn")
        out += [f"figure {f['id']}: {p}" for p in f["problems"]]
    if not report["colab"]:
        out.append("no Colab launch link")
    if report["remote"]:
        out.append(f"requests to the network: {report['remote'][:3]}")
    out += [f"JavaScript console error: {e}" for e in report.get("console", ())]
    if report["traceback"]:
        out.append("a cell raised (Traceback on the page)")
    if report["slider_moved"] and not report["slider_moved"].get("redrawn"):
        out.append("moving a slider did not redraw its figure")
    for d in report.get("dragged", ()):
        if d.get("left"):
            out.append(f"figure {d['id']}: a finger dragging its slider left the page (a "
                       f"sideways swipe taken as 'back': does the page scroll sideways?)")
        elif d["reached"] < d["steps"]:
            out.append(f"figure {d['id']}: a finger dragging its slider reached {d['reached']} "
                       f"of its {d['steps']} steps")
    turn = report.get("turned_3d")
    if turn:
        if not turn["turned"]:
            out.append(f"figure {turn['id']}: a finger's drag did not turn the 3-D view")
        if not turn["hover"]:
            out.append(f"figure {turn['id']}: a tap on a point of the 3-D view showed no hover")
        if turn["kept"] is False:
            out.append(f"figure {turn['id']}: moving the slider turned the 3-D view back")
    if "tapped" in report and not (report["tapped"] or {}).get("hover"):
        out.append("a tap on a figure showed no hover" if report["tapped"] else
                   "no line plot to tap")
    return out


def screenshots(html_dir, out_dir, pages=None, width: int = 1280) -> list[Path]:
    """Full-page PNG screenshots of the built chapter pages (and their problems printed)."""
    reports = inspect_pages(html_dir, pages, shots_dir=out_dir, width=width)
    for name, report in reports.items():
        for p in problems(report):
            print(f"{name}: {p}")
    return [Path(out_dir) / f"{name}.png" for name in reports]
