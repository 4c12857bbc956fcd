"""Test defaults: the smoke profile, no progress bars, a private dataset cache."""
import os

os.environ.setdefault("DYNAMICS_PROFILE", "smoke")
os.environ.setdefault("DYNAMICS_PROGRESS", "0")
os.environ.setdefault("DYNAMICS_SEED", "0")

import torch  # noqa: E402

torch.set_num_threads(int(os.environ.get("DYNAMICS_THREADS", "1")))  # small models: see runtime.setup
