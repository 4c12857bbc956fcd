"""The book's static assets in a folder, for the tests' synthetic pages (the one home of this
setup): plotly.js as the book serves it and the book's dynamics.js."""
import shutil
from pathlib import Path


def book_assets(folder: Path) -> Path:
    """``folder/_static`` with plotly.min.js and dynamics.js; returns that folder."""
    import plotly

    from dynamics_toolchain import scripts

    static = folder / "_static"
    static.mkdir(parents=True)
    shutil.copyfile(Path(plotly.__file__).parent / "package_data" / "plotly.min.js",
                    static / "plotly.min.js")
    (static / "dynamics.js").write_text(scripts.book_js())
    return static
