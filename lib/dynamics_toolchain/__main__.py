"""``python -m dynamics_toolchain build [chapter ...] [--profile P] [--dest DIR] [--shots]
[--width W]``, ``python -m dynamics_toolchain read HTML_DIR [--shots DIR]`` and
``python -m dynamics_toolchain colab-cells``."""
from __future__ import annotations

from pathlib import Path

from .colab import write_colab_cells
from .pages import build, screenshots


def main(argv=None) -> int:
    """``python -m dynamics_toolchain build [chapter ...] [--profile P] [--dest DIR] [--shots]
    [--width W]``: build the book (or some chapters) in a copy and, with ``--shots``, check
    each chapter page as a reader sees it in a window W px wide (:func:`inspect_pages`; under
    500 px a phone, touched with a finger), print its problems and save a screenshot of its
    first screen under ``DIR/shots``.
    ``python -m dynamics_toolchain read HTML_DIR [--shots DIR]``: read a built book as the
    rendered-book test does (:func:`dynamics_toolchain.reading.read_book`: every chapter at
    each width, both themes, axe-core, the pages' text), print its problems, exit 1 on any.
    ``python -m dynamics_toolchain colab-cells``: rewrite the first cell of every chapter from
    :func:`colab_cell`."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m dynamics_toolchain", description=main.__doc__)
    parser.add_argument("command", choices=["build", "read", "colab-cells"])
    parser.add_argument("chapters", nargs="*",
                        help="chapter notebook names (default: all); for read: the HTML folder")
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--dest", default="_build/preview")
    parser.add_argument("--shots", nargs="?", const=True, default=None,
                        help="build: check and screenshot the pages; read: a folder for screenshots")
    parser.add_argument("--width", type=int, default=1280,
                        help="window width (px) of the screenshots and checks; under 500: a phone "
                             "(844 px high, a touch screen), e.g. 390")
    parser.add_argument("--loose", action="store_true", help="do not treat warnings as errors")
    args = parser.parse_args(argv)
    if args.command == "colab-cells":
        changed = write_colab_cells()
        for path in changed:
            print(f"rewrote the Colab cell of {path}")
        print(f"{len(changed)} notebook(s) changed")
        return 0
    if args.command == "read":
        from .reading import main as read

        if len(args.chapters) != 1:
            parser.error("read takes one argument: the built book's HTML folder")
        return read(args.chapters[0], None if args.shots in (None, True) else args.shots)
    html = build(Path(args.dest).resolve() / "book", args.chapters or None, args.profile,
                 strict=not args.loose)
    print(f"built: {html}")
    if args.shots:
        for shot in screenshots(html, Path(args.dest).resolve() / "shots", args.chapters or None,
                                width=args.width):
            print(f"screenshot: {shot}")
    return 0




if __name__ == "__main__":
    raise SystemExit(main())
