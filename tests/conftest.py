"""Test defaults: the smoke profile, no progress bars, a private dataset cache."""
import os

os.environ.setdefault("DYNAMICS_PROFILE", "smoke")
os.environ.setdefault("DYNAMICS_PROGRESS", "0")
os.environ.setdefault("DYNAMICS_SEED", "0")
