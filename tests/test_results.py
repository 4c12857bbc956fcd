import json

import numpy as np
import pytest
import torch

from dynamics import results
from dynamics.runtime import get_profile


@pytest.fixture
def tmp_data(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "DATA", tmp_path)
    return tmp_path


def test_save_load_roundtrip_with_provenance(tmp_data):
    payload = {"acc": np.array([0.5, float("nan")]), "w": torch.ones(2), "n": np.int64(3)}
    path = results.save("demo_result", payload, profile="smoke", config={"lr": 0.1},
                        command="python -m dynamics_ops.precompute demo --profile smoke", wall_time=1.234)
    assert path == tmp_data / "demo_result.json"
    loaded, prov = results.load("demo_result")
    assert loaded == {"acc": [0.5, None], "w": [1.0, 1.0], "n": 3}
    for key in ("profile", "device", "dynamics", "torch", "python", "date", "command", "config"):
        assert key in prov
    assert prov["torch"] == torch.__version__ and prov["config"] == {"lr": 0.1}
    text = results.describe(prov)
    assert "smoke profile" in text and "Regenerate: python -m dynamics_ops.precompute" in text
    assert json.loads(path.read_text())["provenance"]["wall_time_s"] == 1.2


def test_missing_result_says_how_to_regenerate(tmp_data):
    with pytest.raises(FileNotFoundError, match="dynamics_ops.precompute"):
        results.load("nothing_here")
    with pytest.raises(ValueError):
        results.save("../escape", {}, profile="smoke")


def test_precompute_and_bench_cli_reject_unknown_names(capsys):
    from dynamics_ops import bench, precompute

    with pytest.raises(SystemExit):
        precompute.main(["no_such_chapter", "--profile", "smoke"])
    assert "unknown chapter" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        precompute.main(["grokking", "--profile", "turbo"])
    with pytest.raises(SystemExit):
        precompute.main(["grokking", "--profile", "smoke", "--minutes", "0"])
    assert "--minutes must be a positive number" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["no_such_bench"])


# ----------------------------------------------------------------------------- atomic, and clear when broken

def test_save_is_atomic_an_interrupted_write_keeps_the_old_file(tmp_data, monkeypatch):
    path = results.save("grokking_phase", {"v": 1}, profile="smoke")
    assert json.loads(path.read_text())["payload"] == {"v": 1}

    def crash(*args, **kwargs):
        raise KeyboardInterrupt  # the kernel interrupted between writing and renaming

    monkeypatch.setattr(results.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        results.save("grokking_phase", {"v": 2}, profile="smoke")
    assert json.loads(path.read_text())["payload"] == {"v": 1}  # the old file, whole
    assert [p.name for p in tmp_data.iterdir()] == ["grokking_phase.json"]  # no temp file left


@pytest.mark.parametrize("name,chapter", [
    ("grokking_phase", "grokking"), ("spectral_timing", "spectral_optimizers"),
    ("collapse_imbalance", "neural_collapse"), ("weight_decay_grid", "weight_decay"),
    ("initialization_depth_time", "initialization"), ("lottery_lmc", "lottery_tickets"),
    ("mystery", "all"),
])
def test_each_result_file_maps_to_the_chapter_that_regenerates_it(name, chapter):
    assert results.chapter_of(name) == chapter
    assert results.regenerate_command(name) == f"python -m dynamics_ops.precompute {chapter} --profile cpu"


def test_every_committed_result_file_has_a_chapter():
    from dynamics import CHAPTERS
    from dynamics_ops import gpumeasure

    for path in results.DATA.glob("*.json"):
        if path.name == gpumeasure.MEASURED:  # the measured gpu runs
            continue
        assert results.chapter_of(path.stem) in CHAPTERS, path.name


@pytest.mark.parametrize("text,what", [
    ('{"provenance": {"profile": "cpu"}, "payload": [1, 2', "corrupt or incomplete"),  # truncated
    ("", "corrupt or incomplete"),
    ('{"provenance": {"profile": "cpu", "device": "cpu", "dynamics": "0.1", "torch": "2", "date": "x"}}',
     "has no 'payload'"),
    ('{"payload": [1]}', "has no 'provenance'"),
    ("[1, 2]", "has no 'payload' and no 'provenance'"),
    ('{"payload": [1], "provenance": {"profile": "cpu"}}', "provenance lacks device, dynamics, torch, date"),
])
def test_a_broken_result_file_names_itself_and_the_command(tmp_data, text, what):
    (tmp_data / "spectral_memory.json").write_text(text)
    with pytest.raises(ValueError) as err:
        results.load("spectral_memory")
    message = str(err.value)
    assert what in message and str(tmp_data / "spectral_memory.json") in message
    assert "python -m dynamics_ops.precompute spectral_optimizers --profile cpu" in message


def test_a_missing_result_file_names_the_chapter(tmp_data):
    with pytest.raises(FileNotFoundError, match="python -m dynamics_ops.precompute lottery_tickets --profile cpu"):
        results.load("lottery_imp")


def test_provenance_of_a_result_or_none(tmp_data):
    """What a panel under a precomputed figure says of it: the file's provenance, or None."""
    assert results.provenance_of("nothing_here") is None
    results.save("demo_result", {"x": 1}, profile="smoke", command="python -m dynamics_ops.precompute demo")
    prov = results.provenance_of("demo_result")
    assert prov["profile"] == "smoke" and prov == results.load("demo_result")[1]


def test_the_source_digest_sees_the_code_a_chapters_results_depend_on(tmp_path):
    """source_digest: the same copy of the library gives the same digest; a change to a theme
    moves that chapter's digest (and the capstone's, which runs every theme's science) and no
    other chapter's, a change to its figures or its package's re-exports none; a change to the
    core (train.py) moves every chapter's, its __init__.py (the chapter registry) none."""
    import shutil

    lib = tmp_path / "dynamics"
    shutil.copytree(results.LIB, lib, ignore=shutil.ignore_patterns("__pycache__"))
    before = {c: results.source_digest(c, lib) for c in ("grokking", "lottery_tickets", "one_network")}
    assert before["grokking"] == results.source_digest("grokking") and len(set(before.values())) == 3
    (lib / "grokking" / "science.py").write_text((lib / "grokking" / "science.py").read_text() + "\n# x\n")
    after = {c: results.source_digest(c, lib) for c in before}
    assert after["grokking"] != before["grokking"] and after["one_network"] != before["one_network"]
    assert after["lottery_tickets"] == before["lottery_tickets"]
    # a change to how a theme presents its results (a figure, a claim) leaves its data the code's
    (lib / "grokking" / "figures.py").write_text((lib / "grokking" / "figures.py").read_text() + "\n# z\n")
    assert results.source_digest("grokking", lib) == after["grokking"]
    # as does a change to what its package re-exports (__init__.py: imports and __all__ only)
    (lib / "grokking" / "__init__.py").write_text((lib / "grokking" / "__init__.py").read_text() + "\n# w\n")
    assert results.source_digest("grokking", lib) == after["grokking"]
    # nor does the core's __init__.py (the version and the chapter registry: a new chapter)
    (lib / "__init__.py").write_text((lib / "__init__.py").read_text() + "\n# v\n")
    assert {c: results.source_digest(c, lib) for c in before} == after
    # the capstone's digest covers the themes its science imports, not every theme
    (lib / "spectral" / "science.py").write_text((lib / "spectral" / "science.py").read_text() + "\n# s\n")
    assert {c: results.source_digest(c, lib) for c in before} == after
    (lib / "train.py").write_text((lib / "train.py").read_text() + "\n# y\n")
    assert all(results.source_digest(c, lib) != after[c] for c in before)
    with pytest.raises(ValueError, match="unknown chapter"):
        results.source_digest("nonsense")


def test_the_themes_a_theme_imports_are_read_from_its_source(tmp_path):
    """imported_themes on constructed packages: absolute-relative imports of another theme's
    module or of the theme itself count, presentation modules and the core do not."""
    lib = tmp_path / "dynamics"
    for theme in ("capstone", "grokking", "lottery", "spectral"):
        (lib / theme).mkdir(parents=True)
    (lib / "capstone" / "experiments.py").write_text(
        "from .. import models\nfrom ..grokking.science import x\nfrom .. import lottery\n")
    (lib / "capstone" / "figures.py").write_text("from ..spectral import figures\n")
    (lib / "capstone" / "science.py").write_text("from .science_helpers import y\nimport os\n")
    assert results.imported_themes("capstone", lib) == {"grokking", "lottery"}
    assert results.imported_themes("spectral", lib) == set()
    assert results.imported_themes("capstone") == {"collapse", "grokking", "lottery", "weight_decay"}


def test_a_saved_file_records_its_commit_and_source(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNAMICS_RESULTS_DIR", str(tmp_path))
    import json

    prov = json.loads(results.save("grokking_demo", {"x": 1}, "smoke").read_text())["provenance"]
    assert prov["source"] == results.source_digest("grokking")
    assert prov["commit"] == results.git_commit() and prov["commit"]  # a checkout has one


# ------------------------------------------------------------------ typed results (Record)
from dataclasses import dataclass, field  # noqa: E402


@dataclass
class _Arm(results.Record):
    acc: list
    seed: int = 0


@dataclass
class _Run(results.Record):
    depths: list
    arms: dict[str, _Arm]
    first: _Arm
    history: list[_Arm] = field(default_factory=list)


_PAYLOAD = {"depths": [2, 4], "arms": {"relu": {"acc": [0.5]}, "tanh": {"acc": [0.1], "seed": 3}},
            "first": {"acc": [1.0], "seed": 1}, "history": [{"acc": []}]}


def test_a_record_is_built_field_by_field_and_gives_its_payload_back(tmp_data):
    run = _Run.of(_PAYLOAD)
    assert run.depths == [2, 4] and run.arms["tanh"].seed == 3 and run.arms["relu"].seed == 0
    assert isinstance(run.first, _Arm) and run.history[0].acc == []
    results.save("demo_typed", run, profile="smoke")
    again, _ = results.load("demo_typed", as_=_Run)
    assert again == run
    # the file holds the payload's own layout (the defaults written out)
    assert results.load("demo_typed")[0]["arms"]["relu"] == {"acc": [0.5], "seed": 0}


@pytest.mark.parametrize("change, says", [
    (lambda p: p.pop("depths"), "no field depths"),
    (lambda p: p.update(depth=[2]), "unknown field depth"),
    (lambda p: p["arms"]["tanh"].update(accuracy=[0.2]), r"arms\['tanh'\].*unknown field accuracy"),
    (lambda p: p["history"][0].pop("acc"), r"history\[0\].*no field acc"),
])
def test_a_renamed_field_fails_at_once_naming_the_file_and_the_command(tmp_data, change, says):
    payload = json.loads(json.dumps(_PAYLOAD))
    change(payload)
    with pytest.raises(ValueError, match=says):
        _Run.of(payload)
    results.save("demo_renamed", payload, profile="smoke")
    with pytest.raises(ValueError, match=r"demo_renamed\.json.*dynamics_ops\.precompute"):
        results.load("demo_renamed", as_=_Run)


@dataclass
class _Deep(results.Record):
    by_seed: dict[str, dict[str, _Arm]]
    rows: list[list[_Arm]] = field(default_factory=list)


def test_records_nest_at_any_depth_and_a_built_one_is_taken_as_it_is():
    deep = _Deep.of({"by_seed": {"0": {"relu": {"acc": [1.0]}}}, "rows": [[{"acc": []}]]})
    assert isinstance(deep.by_seed["0"]["relu"], _Arm) and isinstance(deep.rows[0][0], _Arm)
    assert _Deep.of(deep.to_dict()) == deep   # the nested records are already built
    with pytest.raises(ValueError, match=r"by_seed\['0'\]\['relu'\].*no field acc"):
        _Deep.of({"by_seed": {"0": {"relu": {}}}})


def test_a_record_must_be_a_dataclass_read_from_a_mapping():
    class Loose(results.Record):
        pass

    with pytest.raises(TypeError, match="dataclass"):
        Loose.of({})
    with pytest.raises(ValueError, match="mapping"):
        _Run.of([1, 2])


@dataclass
class _Rows(results.Record):
    WHOLE = "rows"
    rows: list[_Arm]


@dataclass
class _ByRate(results.Record):
    WHOLE = "by_lr"
    by_lr: dict[str, _Arm]


def test_a_file_whose_top_is_a_list_or_a_keyed_mapping_is_one_whole_field(tmp_data):
    """A payload with no fixed keys at the top (a list of rows; a mapping from a learning rate)
    is read into the record's WHOLE field, its items built as records, and written back as it
    was; a renamed field inside is refused, naming where."""
    rows = _Rows.of([{"acc": [0.5]}, {"acc": []}])
    assert [type(r) for r in rows.rows] == [_Arm, _Arm] and rows.rows[0].acc == [0.5]
    assert rows.to_dict() == [{"acc": [0.5], "seed": 0}, {"acc": [], "seed": 0}]
    assert _Rows.of(rows) is rows
    rates = _ByRate.of({"0.01": {"acc": [1.0]}})
    assert rates.by_lr["0.01"].acc == [1.0] and rates.to_dict() == {"0.01": {"acc": [1.0], "seed": 0}}
    with pytest.raises(ValueError, match=r"rows\[1\].*no field acc.*unknown field accuracy"):
        _Rows.of([{"acc": []}, {"accuracy": []}])
    results.save("demo_rows", rows, profile="smoke", command="python -m demo")
    back, _ = results.load("demo_rows", as_=_Rows)
    assert back == rows and results.load("demo_rows")[0] == rows.to_dict()
