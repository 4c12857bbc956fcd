"""Precomputed results: JSON files in ``data/`` that record how they were made.

``save(name, payload, profile=..., config=...)`` writes ``data/<name>.json`` as
``{"provenance": {...}, "payload": ...}``; provenance holds the profile, device, library,
torch and python versions, the date, the command that regenerates the file and the config, and
the code that made it: the commit and a digest of the source its results depend on
(:func:`source_digest`: the theme's package and the core it runs through).
``$DYNAMICS_RESULTS_DIR``, when set, is where ``save`` writes instead (a dry run must not
overwrite ``data/``). ``load(name)`` returns ``(payload, provenance)``; ``describe(provenance)`` is the one-line
note the book prints under a precomputed figure.

A runner whose results a claim reads returns a :class:`Record`: a dataclass whose fields are
its payload's keys, so a claim names what it reads (``run.depths``, not ``run["depths"]``).
``load(name, as_=Record)`` checks the file against it, field by field: a field renamed on one
side and not the other fails at once, naming the file, the field and the command that
regenerates it, never as a ``KeyError`` deep inside a claim.

Files are written atomically (a temporary file beside the target, then ``os.replace``), so
an interrupted precompute leaves the old file, never half a new one. A file that is missing,
truncated or lacks its parts is an error that names it and the command that regenerates it.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import os
import platform
import tempfile
import typing
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
PROVENANCE_KEYS = ("profile", "device", "dynamics", "torch", "date")  # what describe() prints


def data_dir() -> Path:
    """The repository's ``data/`` folder (the library is installed editable from the repo)."""
    if not DATA.is_dir():
        raise FileNotFoundError(
            f"no data/ folder at {DATA}: install the library from a clone of the repository "
            "(pip install -e .), not as a bare package")
    return DATA


def results_dir() -> Path:
    """Where precomputed results are written: ``$DYNAMICS_RESULTS_DIR`` when set (a dry run
    must not overwrite ``data/``), else ``data/``."""
    from .runtime import folder

    return folder("DYNAMICS_RESULTS_DIR") or data_dir()


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


class Record:
    """A typed result: subclass it as a dataclass whose fields are the payload's keys (a field
    with a default may be absent from older files). :meth:`of` builds one from a payload and
    refuses a payload that lacks a field without a default or holds a key that is no field;
    a field annotated with a Record, or a ``list``/``dict`` of one, is built the same way.
    ``to_dict`` gives the payload back (what :func:`save` writes).

    A file whose top is no mapping of fixed keys (a list of rows, or a mapping from a value
    such as a learning rate) is a record of one field that names it, ``WHOLE``: the payload is
    that field's value, read into it by :meth:`of` and written back by :meth:`to_dict`
    unchanged."""

    WHOLE: typing.ClassVar[str | None] = None  # the one field that is the whole payload

    @classmethod
    def of(cls, payload, where: str = ""):
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{cls.__name__} must be a dataclass to be a Record")
        where = where or cls.__name__
        if cls.WHOLE is not None:
            if isinstance(payload, cls):
                return payload
            payload = {cls.WHOLE: payload}
        if not isinstance(payload, dict):
            raise ValueError(f"{where}: a {cls.__name__} is read from a mapping, got "
                             f"{type(payload).__name__}")
        fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
        needed = [n for n, f in fields.items() if f.default is dataclasses.MISSING
                  and f.default_factory is dataclasses.MISSING]
        missing = [n for n in needed if n not in payload]
        unknown = [str(k) for k in payload if k not in fields]
        if missing or unknown:
            raise ValueError(
                f"{where} does not match {cls.__name__}: "
                + "; ".join(part for part in (
                    missing and f"no field {', '.join(missing)}",
                    unknown and f"unknown field {', '.join(unknown)}") if part)
                + f" (a {cls.__name__} has {', '.join(fields)}: a field renamed in the code "
                  "or in the file?)")
        hints = typing.get_type_hints(cls)
        return cls(**{k: _typed(hints.get(k), v, f"{where}.{k}") for k, v in payload.items()})

    def to_dict(self):
        if self.WHOLE is not None:
            return _plain(getattr(self, self.WHOLE))
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def _typed(hint, value, where: str):
    """``value`` built as ``hint`` says where it names a Record: the hint itself, or the items
    of a ``list[...]`` or the values of a ``dict[..., ...]``, at any depth; a record already
    built, ``None`` and anything else as it is."""
    if value is None:
        return value
    if isinstance(hint, type) and issubclass(hint, Record):
        return value if isinstance(value, hint) else hint.of(value, where)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is list and args and isinstance(value, list):
        return [_typed(args[0], v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict and len(args) == 2 and isinstance(value, dict):
        return {k: _typed(args[1], v, f"{where}[{k!r}]") for k, v in value.items()}
    return value


# The core a theme's results run through: a change here can change any precomputed number
# (units.py holds `rounded`, which every precompute's payload goes through). Not the core's
# __init__.py: it holds only the version, the chapter registry and `setup`'s re-export
# (tests/test_layout.py holds it to that), so adding a chapter leaves every file the code's.
CORE_SOURCES = ("config.py", "data.py", "models.py", "runtime.py", "train.py", "units.py",
                "sweep")
# A theme's modules that only present its results (figures, claims, the facts its prose
# glues, the live panels): no precomputed number depends on them (none of the theme's
# science or experiments imports them), so a change to them leaves its data the code's. Nor
# does its package's __init__.py, which only imports and lists names (tests/test_layout.py
# holds it to that template).
PRESENTATION = ("figures.py", "claims.py", "facts.py", "panels.py", "__init__.py")
LIB = Path(__file__).resolve().parent


def imported_themes(theme: str, lib: Path | None = None) -> set[str]:
    """The other themes whose modules ``theme``'s non-presentation modules import (``from
    ..grokking.science import ...``, ``from ..lottery import science``), read from the source."""
    import ast

    from . import CHAPTERS

    lib = Path(lib) if lib is not None else LIB
    known, found = set(CHAPTERS.values()), set()
    for f in sorted((lib / theme).rglob("*.py")):
        if f.parent == lib / theme and f.name in PRESENTATION:
            continue
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module:
                found.add(node.module.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.level == 2:  # from .. import grokking
                found.update(a.name for a in node.names)
    return (found & known) - {theme}


def source_digest(chapter: str, lib: Path | None = None) -> str:
    """A digest (sha256, 16 hex digits) of the source ``chapter``'s results depend on: its
    theme's package but its :data:`PRESENTATION` modules, and :data:`CORE_SOURCES`; the
    capstone (one_network) runs other themes' science, so its digest also covers every theme
    its science imports (:func:`imported_themes`). Every
    ``.py`` file's path and bytes count; nothing else (a cache, a notebook) does. ``lib``:
    another copy of ``lib/dynamics``."""
    import hashlib

    from . import CHAPTERS

    lib = Path(lib) if lib is not None else LIB
    if chapter not in CHAPTERS:
        raise ValueError(f"source_digest: unknown chapter {chapter!r}; choose one of {', '.join(CHAPTERS)}")
    themes = [CHAPTERS[chapter]]
    if CHAPTERS[chapter] == "capstone":  # it runs other themes' science: the ones it imports
        themes = sorted(set(themes) | imported_themes("capstone", lib))
    files = []
    for part in CORE_SOURCES:
        where = lib / part
        files += sorted(where.rglob("*.py")) if where.is_dir() else [where]
    for theme in themes:
        files += [f for f in sorted((lib / theme).rglob("*.py"))
                  if not (f.parent == lib / theme and f.name in PRESENTATION)]
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(lib).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def git_commit() -> str | None:
    """The commit the library was loaded from (short hash), None outside a git checkout."""
    import subprocess

    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout.strip() or None) if out.returncode == 0 else None


def provenance(profile: str, config=None, command: str | None = None, device=None,
               note: str = "", chapter: str | None = None) -> dict:
    from . import __version__
    from .arithmetic import fingerprint
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
        commit=git_commit(),
        source=None if chapter is None else source_digest(chapter),
        arithmetic=fingerprint(device),  # what else decides the bits (dynamics.arithmetic)
    )


def save(name: str, payload, profile: str, config=None, command: str | None = None,
         note: str = "", wall_time: float | None = None, extra: dict | None = None) -> Path:
    """Write ``data/<name>.json`` with its provenance (and the ``extra`` entries the
    precompute adds to it: its sample unit) and return the path."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"result name must be a plain file stem, got {name!r}")
    chapter = chapter_of(name)
    prov = provenance(profile, config, command, note=note, chapter=None if chapter == "all" else chapter)
    if wall_time is not None:
        prov["wall_time_s"] = round(float(wall_time), 1)
    prov.update(_plain(extra or {}))
    path = results_dir() / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(dict(provenance=prov, payload=_plain(payload)), indent=1) + "\n"
    write_atomic(path, text)
    return path


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one: a
    temporary file in the same folder, flushed to disk, then renamed over the target."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def chapter_of(name: str) -> str:
    """The chapter (notebook name) whose precompute writes result ``name``: results are named
    ``<theme>_<what>``, after the theme module (``spectral_timing`` -> spectral_optimizers)."""
    from . import CHAPTERS

    by_theme = {theme: chapter for chapter, theme in CHAPTERS.items()}
    theme = max((t for t in by_theme if name == t or name.startswith(t + "_")), key=len, default=None)
    return by_theme.get(theme, "all")


def regenerate_command(name: str, profile: str = "cpu") -> str:
    """The command that rewrites ``data/<name>.json`` (the book is published in the cpu profile)."""
    return f"python -m dynamics_ops.precompute {chapter_of(name)} --profile {profile}"


def load(name: str, as_: type[Record] | None = None):
    """``(payload, provenance)`` of ``data/<name>.json``, the payload as the :class:`Record`
    ``as_`` when given. A missing, truncated or incomplete file, or one that does not match
    ``as_``, is an error that names it and the command that regenerates it."""
    path = data_dir() / f"{name}.json"
    again = f"regenerate it with `{regenerate_command(name)}`"
    if not path.exists():
        raise FileNotFoundError(f"no precomputed result {path}; {again}")
    try:
        blob = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"{path} is corrupt or incomplete (not valid JSON: {err}); {again}") from None
    missing = [key for key in ("payload", "provenance") if not isinstance(blob, dict) or key not in blob]
    if missing:
        raise ValueError(f"{path} is incomplete: it has no {' and no '.join(map(repr, missing))} "
                         f"(a result file holds {{'provenance': ..., 'payload': ...}}); {again}")
    prov = blob["provenance"]
    lacking = [k for k in PROVENANCE_KEYS if k not in prov] if isinstance(prov, dict) else ["all"]
    if lacking:
        raise ValueError(f"{path} is incomplete: its provenance lacks {', '.join(lacking)}; {again}")
    payload = blob["payload"]
    if as_ is not None:
        try:
            payload = as_.of(payload, where=str(path))
        except ValueError as err:
            raise ValueError(f"{err}; {again}") from None
    return payload, dict(blob["provenance"], file=name)  # file: which one (describe)


def provenance_of(name: str) -> dict | None:
    """The provenance of ``data/<name>.json`` (what the static book shows above a panel that
    sits under a precomputed figure), or None when there is no such file."""
    try:
        return load(name)[1]
    except FileNotFoundError:
        return None


def exists(name: str) -> bool:
    return (DATA / f"{name}.json").exists()


def describe(prov: dict) -> str:
    """One line under a precomputed figure: how and where it was made, and, for a file read by
    :func:`load`, whether it is known to be the current code's (its recorded source digest)."""
    parts = [f"Precomputed in the {prov['profile']} profile on {prov['device']}",
             f"torch {prov['torch']}, dynamics {prov['dynamics']}, {prov['date']}"]
    if prov.get("wall_time_s") is not None:
        parts.append(f"{prov['wall_time_s']} s")
    text = "; ".join(parts) + "."
    if prov.get("note"):
        text += f" {prov['note']}"
    if prov.get("command"):
        text += f" Regenerate: {prov['command']}."
    name = prov.get("file")
    if name and chapter_of(name) != "all":
        if not prov.get("source"):
            text += (" Not yet checked against the current code: the file was made before the "
                     "book recorded the code behind each file.")
        elif prov["source"] != source_digest(chapter_of(name)):
            text += (" Made by an earlier version of the code; python -m dynamics_ops.verify "
                     f"{name} says whether the current code still makes it.")
    return text
