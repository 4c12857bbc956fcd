"""Precomputed results: JSON files in ``data/`` that record how they were made.

``save(name, payload, profile=..., config=...)`` writes ``data/<name>.json`` as
``{"provenance": {...}, "payload": ...}``; provenance holds the profile, device, library,
torch and python versions, the date, the command that regenerates the file and the config.
``$DYNAMICS_RESULTS_DIR``, when set, is where ``save`` writes instead (a dry run must not
overwrite ``data/``). ``load(name)`` returns ``(payload, provenance)``; ``describe(provenance)`` is the one-line
note the book prints under a precomputed figure.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"


def data_dir() -> Path:
    """The repository's ``data/`` folder (the library is installed editable from the repo)."""
    if not DATA.is_dir():
        raise FileNotFoundError(
            f"no data/ folder at {DATA}: install the library from a clone of the repository "
            "(pip install -e .), not as a bare package")
    return DATA


def _plain(obj):
    """Make numpy/torch values JSON-friendly (NaN/inf become None)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, torch.Tensor):
        return _plain(obj.detach().cpu().tolist())
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if hasattr(obj, "to_dict"):
        return _plain(obj.to_dict())
    return obj


def provenance(profile: str, config=None, command: str | None = None, device=None,
               note: str = "") -> dict:
    from . import __version__
    from .runtime import get_device

    device = torch.device(device) if device is not None else get_device()
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or platform.machine()
    return dict(
        profile=profile,
        device=f"{device.type} ({name})" if name else device.type,
        dynamics=__version__,
        torch=torch.__version__,
        python=platform.python_version(),
        date=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        command=command,
        config=_plain(config.to_dict() if hasattr(config, "to_dict") else (config or {})),
        note=note,
    )


def save(name: str, payload, profile: str, config=None, command: str | None = None,
         note: str = "", wall_time: float | None = None) -> Path:
    """Write ``data/<name>.json`` with its provenance and return the path."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"result name must be a plain file stem, got {name!r}")
    prov = provenance(profile, config, command, note=note)
    if wall_time is not None:
        prov["wall_time_s"] = round(float(wall_time), 1)
    out = os.environ.get("DYNAMICS_RESULTS_DIR")  # e.g. a dry run writes elsewhere than data/
    path = (Path(out) if out else data_dir()) / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(provenance=prov, payload=_plain(payload)), indent=1) + "\n")
    return path


def load(name: str):
    """``(payload, provenance)`` of ``data/<name>.json``."""
    path = data_dir() / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(
            f"no precomputed result {path.name}; regenerate it with "
            f"`python -m dynamics.precompute <chapter>`")
    blob = json.loads(path.read_text())
    return blob["payload"], blob["provenance"]


def exists(name: str) -> bool:
    return (DATA / f"{name}.json").exists()


def describe(prov: dict) -> str:
    """One line under a precomputed figure: how and where it was made."""
    parts = [f"Precomputed in the {prov['profile']} profile on {prov['device']}",
             f"torch {prov['torch']}, dynamics {prov['dynamics']}, {prov['date']}"]
    if prov.get("wall_time_s") is not None:
        parts.append(f"{prov['wall_time_s']} s")
    text = "; ".join(parts) + "."
    if prov.get("note"):
        text += f" {prov['note']}"
    if prov.get("command"):
        text += f" Regenerate: {prov['command']}"
    return text
