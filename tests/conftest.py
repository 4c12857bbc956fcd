"""Test defaults: the smoke profile, no progress bars, a private dataset cache."""
import os

os.environ.setdefault("DYNAMICS_PROFILE", "smoke")
os.environ.setdefault("DYNAMICS_PROGRESS", "0")
os.environ.setdefault("DYNAMICS_SEED", "0")

import torch  # noqa: E402

torch.set_num_threads(int(os.environ.get("DYNAMICS_THREADS", "1")))  # small models: see runtime.setup

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

# tests/seeds.py (claim_seeds, SEEDS) is importable from every test module as ``seeds``
sys.path.insert(0, str(Path(__file__).resolve().parent))
