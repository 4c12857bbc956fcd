"""The printed edition: one PDF of the whole book, made from the built HTML by the system
Chromium.

    python -m dynamics_toolchain.printed _build/html            # writes _build/html/training-dynamics.pdf

Each page of the table of contents (the landing page, then the chapters) is opened in Chromium
and printed with the book's print style sheet (``static/print.css``, served in ``dynamics.css``:
no sidebars, header, launch buttons or page navigation). Before it prints, every figure is
replaced by a picture of itself as drawn (``static/evaluate/to_images.js``, ``Plotly.toImage``: 3-D figures print too, which
WebGL canvases do not), a slider figure at its default step with the slider's value written
under it; a live panel prints as the note the static book shows in its place, and each
chapter's references print at its end. A title page with the book's version and a table of
contents with each chapter's first page come first, and every page is numbered.
:func:`figures_in` lists the pictures a PDF holds, page by page, for the tests to look at.
"""
from __future__ import annotations

import argparse
import io
import tempfile
from pathlib import Path

from .scripts import evaluate

__all__ = ["PDF_NAME", "print_book", "figures_in", "main"]

PDF_NAME = "training-dynamics.pdf"

# Every drawn figure becomes a picture of itself (and, for a slider figure, the value it shows).
TO_IMAGES_JS = evaluate("to_images")

NUMBERS_HTML = """<html><head><style>
@page {{ size: A4; margin: 0; }}
body {{ margin: 0; font: 10pt Helvetica, Arial, sans-serif; color: #555; }}
div.p {{ height: 297mm; position: relative; break-after: page; }}
div.p span {{ position: absolute; bottom: 8mm; width: 100%; text-align: center; }}
</style></head><body>{pages}</body></html>"""

FRONT_HTML = """<html><head><meta charset="utf-8"><style>
@page {{ size: A4; margin: 25mm 22mm; }}
body {{ font: 11pt Georgia, serif; color: #111; }}
h1 {{ font-size: 28pt; margin: 60mm 0 6mm; }} .stamp {{ color: #555; }}
.toc {{ break-before: page; }} .toc h2 {{ font-size: 18pt; }}
.toc li {{ list-style: none; display: flex; margin: 0.5em 0; }}
.toc li .dots {{ flex: 1; border-bottom: 1px dotted #999; margin: 0 0.4em 0.3em; }}
</style></head><body><h1>{title}</h1><p class="stamp">{stamp}</p><p>{url}</p>
<div class="toc"><h2>Contents</h2><ul>{entries}</ul></div></body></html>"""


def _pages(html_dir: Path) -> list[tuple[str, Path]]:
    """The book's pages in the order of its table of contents: (title, path)."""
    import yaml

    from dynamics.results import ROOT

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [c["file"] for c in toc.get("chapters") or []]
    out = []
    for f in files:
        path = html_dir / f"{f}.html"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: build the book first (jupyter-book build .)")
        out.append((f, path))
    return out


def print_book(html_dir, out: Path | None = None) -> Path:
    """Print the built book in ``html_dir`` to one PDF (default ``html_dir/`` :data:`PDF_NAME`)
    and return its path."""
    from html import escape

    from playwright.sync_api import sync_playwright
    from pypdf import PdfReader, PdfWriter

    from .sphinx import stamp
    from .pages import _browser
    from .scripts import FIGURES_DRAWN_JS

    html_dir = Path(html_dir).resolve()
    out = Path(out) if out is not None else html_dir / PDF_NAME
    pages = _pages(html_dir)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        tmp = Path(tmp)
        browser = _browser(pw)
        context = browser.new_context(viewport={"width": 1100, "height": 1400})
        parts, titles = [], []
        for name, path in pages:
            page = context.new_page()
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(
                ("file:", "data:", "blob:")) else r.abort())
            page.goto(path.as_uri(), wait_until="load")
            page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
            page.wait_for_function(FIGURES_DRAWN_JS, timeout=120_000)  # every figure drawn
            page.evaluate(TO_IMAGES_JS)
            titles.append(page.evaluate("() => (document.querySelector('article h1') || "
                                        "document.querySelector('h1') || {}).textContent || document.title")
                          .replace("#", "").strip())
            pdf = tmp / f"{len(parts):02d}.pdf"
            page.emulate_media(media="print")
            page.pdf(path=str(pdf), format="A4", print_background=True,
                     margin={"top": "18mm", "bottom": "20mm", "left": "16mm", "right": "16mm"})
            parts.append(pdf)
            page.close()
        counts = [len(PdfReader(str(p)).pages) for p in parts]
        front_pages = 2  # the title page and the contents
        starts, at = [], front_pages + 1
        for c in counts:
            starts.append(at)
            at += c
        entries = "".join(f'<li><span>{escape(t)}</span><span class="dots"></span><span>{s}</span></li>'
                          for t, s in zip(titles, starts))
        from .colab import repository_url

        front = context.new_page()
        front.set_content(FRONT_HTML.format(title="Training Dynamics", stamp=escape(stamp()),
                                            url=escape(repository_url()), entries=entries))
        front.pdf(path=str(tmp / "front.pdf"), format="A4", prefer_css_page_size=True)
        total = front_pages + sum(counts)
        numbers = context.new_page()
        numbers.set_content(NUMBERS_HTML.format(pages="".join(
            f'<div class="p"><span>{k}</span></div>' for k in range(1, total + 1))))
        numbers.pdf(path=str(tmp / "numbers.pdf"), format="A4", prefer_css_page_size=True)
        browser.close()

        writer = PdfWriter()
        for part in [tmp / "front.pdf", *parts]:
            for p in PdfReader(str(part)).pages:
                writer.add_page(p)
        if len(writer.pages) != total:
            raise RuntimeError(f"the title page and contents took {len(writer.pages) - sum(counts)} "
                               f"pages, not {front_pages}: the contents' page numbers would be wrong")
        numbered = PdfReader(str(tmp / "numbers.pdf")).pages
        for k, p in enumerate(writer.pages):
            if k >= 1:  # the title page carries no number
                p.merge_page(numbered[k])
        for t, s in zip(titles, starts):
            writer.add_outline_item(title=t, page_number=s - 1)
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "wb") as f:
            writer.write(f)
    return out


def figures_in(pdf) -> list[list[dict]]:
    """The pictures in ``pdf``, page by page: each one's size in pixels and how many distinct
    colours it has (a blank or failed figure has one or two)."""
    from PIL import Image
    from pypdf import PdfReader

    found = []
    for page in PdfReader(str(pdf)).pages:
        pics = []
        for im in page.images:
            img = Image.open(io.BytesIO(im.data)).convert("RGB")
            small = img.resize((max(1, img.width // 4), max(1, img.height // 4)))
            pics.append(dict(width=img.width, height=img.height,
                             colours=len(small.getcolors(1 << 24))))
        found.append(pics)
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dynamics_toolchain.printed", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("html", nargs="?", default="_build/html", help="the built book")
    parser.add_argument("-o", "--out", help=f"the PDF (default: <html>/{PDF_NAME})")
    args = parser.parse_args(argv)
    path = print_book(Path(args.html), Path(args.out) if args.out else None)
    print(f"printed: {path} ({sum(len(p) for p in figures_in(path))} figures)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
