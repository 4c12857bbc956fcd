"""The book's toolchain's tests: tests/toolchain/bookpage.py (a page's assets for a browser
test) is importable from them as ``bookpage``."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
