"""dynamics: the shared library of the Training Dynamics book.

Core modules: ``runtime`` (profile, device, seed), ``config`` (self-describing experiment
settings), ``data``, ``models``, ``train`` (one loop), ``sweep`` (many models at once),
``plots``, ``widgets``, ``results``. Theme modules, one per chapter, hold the science.
"""
__version__ = "0.2.0"

# chapter notebook (chapters/<name>.ipynb) -> theme module (dynamics.<module>)
CHAPTERS = {
    "initialization": "initialization",
    "weight_decay": "weight_decay",
    "spectral_optimizers": "spectral",
    "grokking": "grokking",
    "neural_collapse": "collapse",
    "lottery_tickets": "lottery",
    "schedules": "schedules",
    "one_network": "capstone",
}

from .runtime import setup  # noqa: E402,F401
from .arithmetic import flush_denormals as _flush  # noqa: E402

_flush()  # the book's arithmetic (dynamics.arithmetic): subnormal floats as zero, set on import
