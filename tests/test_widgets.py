from dataclasses import dataclass

import pytest
import torch

from dynamics import data, models, plots, train, widgets
from dynamics.config import Config, param


@dataclass
class Toy(Config):
    lr: float = param(1e-2, "learning rate", low=1e-4, high=1e3, log=True)
    width: int = param(16, "hidden width", low=2, high=64)
    optimizer: str = param("adamw", "optimizer", choices=("adamw", "sgd"))


def _panel():
    d = data.digits()

    def run(update, lr, width, optimizer):
        cfg = Toy(lr=lr, width=width, optimizer=optimizer)
        torch.manual_seed(0)
        m = models.MLP(d.input_dim, cfg.width, 1, 10)
        h = train.train(m, d, steps=30, optimizer=cfg.optimizer, lr=cfg.lr, eval_every=10,
                        progress=False,
                        callbacks=[update.every(lambda h: plots.curves(h, ["train_loss"]),
                                                interval=0.0, total_steps=30)])
        if h.diverged:
            update(status=h.status)
        return plots.curves(h, ["train_loss", "train_acc"], title=f"lr={lr:.3g}")

    return widgets.Panel(run, widgets.controls_for(Toy, ["lr", "width", "optimizer"]), title="Toy")


def test_controls_from_config_metadata():
    ctrls = widgets.controls_for(Toy, ["lr", "width", "optimizer"])
    assert [type(c).__name__ for c in ctrls] == ["Slider", "Slider", "Choice"]
    assert ctrls[0].log and ctrls[1].integer and ctrls[2].options == ("adamw", "sgd")
    with pytest.raises(ValueError, match="no field"):
        widgets.controls_for(Toy, ["depth"])


def test_panel_runs_headlessly_and_updates_figure():
    panel = _panel()
    assert panel.figure is None and panel.status.value == "press Run"
    fig1 = panel.click()
    assert panel.status.value == "done" and panel.progress.value == 1.0
    assert fig1 is not None and fig1.layout.title.text == "lr=0.01"
    panel.set(lr=1e-3, optimizer="sgd")
    fig2 = panel.click()
    assert fig2 is not fig1 and fig2.layout.title.text == "lr=0.001"
    assert panel.runs == 2 and not panel.button.disabled


def test_panel_survives_divergence_and_bad_values():
    panel = _panel()
    panel.set(lr=1e3, optimizer="sgd")
    panel.click()
    assert panel.status.value.startswith("diverged at step")
    panel.set(width=2, lr=1e-2, optimizer="adamw")  # still usable afterwards
    panel.click()
    assert panel.status.value == "done"

    def broken(update, **values):
        raise ValueError("width must be even")

    p2 = widgets.Panel(broken, [widgets.Slider("width", 1, 9, 3, integer=True)])
    p2.click()
    assert p2.status.value == "invalid: width must be even" and not p2.button.disabled
    with pytest.raises(ValueError, match="no control"):
        p2.set(depth=3)


def test_panel_has_a_static_fallback():
    bundle = _panel()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "Live panel" in bundle["text/html"]
