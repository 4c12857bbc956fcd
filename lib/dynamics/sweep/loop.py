"""The sweep's two training loops. ``train_sequential``: one model after another through
:func:`dynamics.train.train` (the reference). ``train_batched``: K models of one architecture
stacked (a leading model axis), one ``vmap``-ed forward, one backward and one batched
optimizer step (:mod:`.optim`) for all; no host sync per step (divergence is tracked in device
tensors, read at evaluations); a diverged model freezes and the others go on."""
from __future__ import annotations

import copy
import math
import time

import torch
import torch.nn as nn

from ..data import Dataset
from ..models import evaluating
from ..runtime import bars_enabled, dry_run
from ..train import History, Hooks, loss_values, measure, train
from .optim import _per_model, batched_step, init_state
from .runs import Run, Spec, _apply_masks, build_model


def train_sequential(model_fn, data: Dataset, spec: Spec, runs: list[Run], bars, job):
    """One model after another through :func:`dynamics.train.train` (the reference); each
    reports into its part of ``job`` (a :class:`dynamics.progress.Progress`)."""
    histories, states = [], []
    for k, run in enumerate(runs):
        if job.stopped:  # the sweep was stopped: the rest keep empty histories
            histories.append(History(info=dict(steps=spec.steps, stopped=True)))
            states.append({})
            continue
        model = build_model(model_fn, run, data.device)
        after = None
        if run.param_mask:
            named = dict(model.named_parameters())
            after = lambda model, step, named=named, pm=run.param_mask: _apply_masks(named, pm)  # noqa: E731
        # train() caps the steps as the sweep did (in a dry run)
        with job.part(k, len(runs)):
            h = train(model, run.data(data), spec.recipe.replace(lr=run.lr, weight_decay=run.weight_decay),
                      metrics=spec.metrics, hooks=Hooks(after_step=after), seed=run.seed,
                      bars=bars, desc=f"config {k + 1}/{len(runs)}")
        histories.append(h)
        states.append({n: t.detach() for n, t in model.state_dict().items()})
    return histories, states



def _per_example_loss(name: str, out: torch.Tensor, y: torch.Tensor, n_classes: int) -> torch.Tensor:
    """[K, R] losses of [K, R, C] outputs against [K, R] (or [R]) labels (the one loss
    function, :func:`dynamics.train.loss_values`)."""
    return loss_values(name, out, y.expand(out.shape[:2]), n_classes, reduction="none")


class _Rows:
    """Each model's rows of one split: ``idx`` [K, R] (None: all rows, shared), weights [K, R]
    (None: all valid) and counts n_k. Padded rows have weight 0."""

    def __init__(self, mask: torch.Tensor | None, k: int, n: int, device):
        self.k, self.n = k, n
        if mask is None:
            self.idx = self.weight = None
            self.counts = [n] * k
            self.sel = None
            return
        self.sel = [torch.nonzero(m).flatten() for m in mask]  # one sync, at setup
        self.counts = [len(s) for s in self.sel]
        self.idx, self.weight = _pad([s for s in self.sel], device)

    @property
    def equal(self) -> bool:
        return len(set(self.counts)) == 1

    @classmethod
    def of(cls, rows: list, n: int, device) -> "_Rows":
        """From the runs' own rows (all None: every run uses all ``n`` rows)."""
        return cls(None if rows[0] is None else torch.stack(rows), len(rows), n, device)


def _pad(rows: list[torch.Tensor], device) -> tuple[torch.Tensor, torch.Tensor | None]:
    width = max(len(r) for r in rows)
    if all(len(r) == width for r in rows):
        return torch.stack(rows), None
    idx = torch.zeros(len(rows), width, dtype=torch.long, device=device)
    weight = torch.zeros(len(rows), width, device=device)
    for i, r in enumerate(rows):
        idx[i, :len(r)] = r
        weight[i, :len(r)] = 1.0
    return idx, weight


class _Batches:
    """Mini-batch indices for K models, each exactly as :func:`dynamics.train.train` draws
    them for that model alone (its own generator seeded with its seed, its own rows)."""

    def __init__(self, rows: _Rows, batch_size: int | None, seeds: list[int], device):
        self.rows, self.device = rows, device
        self.full = batch_size is None or all(batch_size >= n for n in rows.counts)
        self.batch_size = batch_size
        if self.full:
            return
        self.gens = [torch.Generator(device=device).manual_seed(s) for s in seeds]
        self.pos = list(rows.counts)  # forces a fresh permutation at the first step
        self.perms = [None] * rows.k
        self.shared = rows.sel is None and len(set(seeds)) == 1
        self.synced = rows.equal
        self.table = None

    def next(self):
        """(idx [K, R] or [R] shared or None for all rows, weight [K, R] or None)."""
        if self.full:
            return self.rows.idx, self.rows.weight
        b, counts = self.batch_size, self.rows.counts
        if self.synced:
            n = counts[0]
            if self.pos[0] + b > n:
                if self.shared:
                    perm = torch.randperm(n, device=self.device, generator=self.gens[0])
                    self.table = perm
                else:
                    perm = torch.stack([torch.randperm(n, device=self.device, generator=g)
                                        for g in self.gens])
                    self.table = perm if self.rows.sel is None else torch.gather(self.rows.idx, 1, perm)
                self.pos = [0] * len(self.pos)
            p = self.pos[0]
            self.pos = [p + b] * len(self.pos)
            return (self.table[p:p + b] if self.shared else self.table[:, p:p + b]), None
        rows = []
        for k, n in enumerate(counts):
            if b >= n:  # this model trains full-batch (train() does when batch_size >= n)
                rows.append(self.rows.sel[k])
                continue
            if self.pos[k] + b > n:
                self.perms[k] = self.rows.sel[k][torch.randperm(n, device=self.device,
                                                               generator=self.gens[k])]
                self.pos[k] = 0
            rows.append(self.perms[k][self.pos[k]:self.pos[k] + b])
            self.pos[k] += b
        return _pad(rows, self.device)


def _signature(model_fn, config) -> tuple:
    """Parameter names and shapes of ``model_fn(config)`` (built on the meta device if possible)."""
    try:
        with torch.device("meta"):
            model = model_fn(config)
    except Exception:  # noqa: BLE001 - some inits do not run on meta: build for real
        model = model_fn(config)
    return tuple((n, tuple(p.shape)) for n, p in model.named_parameters())


class _Stack:
    """K models of one architecture as stacked parameters (a leading model axis) and one
    parameter-less copy on the meta device that ``torch.func.functional_call`` runs with
    each model's parameters under ``vmap``.

    All K models' parameters live in one [K, N] buffer (:attr:`flat`, row k: model k's
    parameters one after another), and the forward pass reads them as views of it
    (:meth:`split`). So the backward pass gives one [K, N] gradient, and the optimizer step,
    the freezing of diverged models and the parameter masks are a few operations on the
    whole buffer, not a few per parameter tensor: on a GPU, where a small model's step is
    kernel launches, that is the step's cost (issue 41). Every element is updated by the
    same arithmetic as before, so the numbers are the same.
    """

    def __init__(self, model_fn, runs: list[Run], device):
        from torch.func import stack_module_state

        models = [build_model(model_fn, run, device) for run in runs]
        params, _ = stack_module_state(models)
        self.names = list(params)
        self.k = len(runs)
        self.shapes = [tuple(params[n].shape[1:]) for n in self.names]
        self.sizes = [math.prod(s) for s in self.shapes]
        self.flat = self.flatten([params[n].detach() for n in self.names])
        self.base = copy.deepcopy(models[0]).to("meta")
        self.template = models[0]  # a real module, to rebuild one model for user metrics
        masked = {n for run in runs for n in (run.param_mask or {})}
        self.mask = None  # [K, N] 0/1, ones where a parameter is not masked; None: no masks
        if masked:
            ones = {n: torch.ones(params[n].shape[1:], device=device) for n in masked}
            self.mask = self.flatten([
                torch.stack([(run.param_mask or {}).get(n, ones[n]) for run in runs])
                if n in masked else torch.ones_like(params[n]) for n in self.names])

    def flatten(self, params: list) -> torch.Tensor:
        """[K, N]: each model's parameters in one row (a fresh tensor)."""
        return torch.cat([p.reshape(len(p), -1) for p in params], dim=1)

    def split(self, flat: torch.Tensor) -> list:
        """The stacked parameters ``[K, ...]`` as views of a [K, N] buffer (no copy)."""
        return [t.view(self.k, *s) for t, s in zip(torch.split(flat, self.sizes, dim=1), self.shapes)]

    @property
    def params(self) -> list:
        """The stacked parameters at the start, ``[K, ...]`` each (views of :attr:`flat`)."""
        return self.split(self.flat)

    def __call__(self, params: list, x: torch.Tensor, idx: torch.Tensor | None = None) -> torch.Tensor:
        """[K, R, C] outputs: every model on x (idx None), on x[idx] (idx [R], shared rows) or
        each on its own rows x[idx[k]] (idx [K, R])."""
        p = dict(zip(self.names, params))
        if idx is None:
            return torch.func.vmap(self._one, in_dims=(0, None))(p, x)
        return torch.func.vmap(self._one, in_dims=(0, None if idx.ndim == 1 else 0))(p, x[idx])

    def _one(self, p: dict, x: torch.Tensor) -> torch.Tensor:
        return torch.func.functional_call(self.base, p, (x,))

    def model(self, params: list, k: int) -> nn.Module:
        """Model ``k`` as an ordinary module (for user metrics)."""
        model = copy.deepcopy(self.template)
        with torch.no_grad():
            for n, t in zip(self.names, params):
                model.get_parameter(n).copy_(t[k])
        return model


def _eval_batched(stack: _Stack, params, x, y, rows: _Rows, loss: str, n_classes: int, row_chunk: int):
    """Mean loss and accuracy of each of K models on its rows of (x, y): two [K] tensors.
    A dry run evaluates the first ``row_chunk`` rows only: the memory an evaluation needs is
    one chunk's, and a dry run's numbers mean nothing (the means are over those rows)."""
    k = rows.k
    total = torch.zeros(k, device=x.device)
    correct = torch.zeros(k, device=x.device)
    seen = torch.zeros(k, device=x.device)
    width = rows.n if rows.idx is None else rows.idx.shape[1]
    cut = dry_run() is not None
    with torch.no_grad(), evaluating(stack.base):
        for start in range(0, min(width, row_chunk) if cut else width, row_chunk):
            if rows.idx is None:
                xb, yb = x[start:start + row_chunk], y[start:start + row_chunk]
                out = stack(params, xb)
                w = None
            else:
                ib = rows.idx[:, start:start + row_chunk]
                out, yb = stack(params, x, ib), y[ib]
                w = None if rows.weight is None else rows.weight[:, start:start + row_chunk]
            losses = _per_example_loss(loss, out, yb, n_classes).float()
            hits = (out.argmax(-1) == yb).float()
            if w is not None:
                losses, hits = losses * w, hits * w
            total += losses.sum(1)
            correct += hits.sum(1)
            seen += out.shape[1] if w is None else w.sum(1)
    if cut:
        return total / seen, correct / seen
    counts = torch.tensor(rows.counts, device=x.device, dtype=torch.float32)
    return total / counts, correct / counts


class Evaluations:
    """The K histories of a batched chunk, and which of its models still train.

    Three facts, each kept once:

    - ``histories[k]``: model k's evaluations. It is *closed* once it has ``diverged_at``
      (nothing is appended after that), exactly where :func:`dynamics.train.train` stops.
    - ``first_bad`` ([K] on the device): the first step whose training loss was non-finite
      (-1: none yet); written at every step without a host sync, read at evaluations.
    - ``alive`` ([K] on the device): the models whose parameters still update; a model
      freezes at its first non-finite loss and when its history closes, so a diverged model
      keeps the parameters it had before it diverged and the others continue unaffected.
    """

    def __init__(self, k: int, spec: Spec, device):
        self.histories = [spec.history() for _ in range(k)]
        self.first_bad = torch.full((k,), -1, dtype=torch.long, device=device)
        self.alive = torch.ones(k, dtype=torch.bool, device=device)
        self.start = time.perf_counter()

    def open(self) -> list[int]:
        """The models whose histories are not closed."""
        return [k for k, h in enumerate(self.histories) if h.diverged_at is None]

    def observe(self, step: int, losses: torch.Tensor) -> torch.Tensor:
        """Note this step's [K] training losses (no sync); returns ``alive``."""
        finite = losses.abs() < math.inf  # False for NaN and +-inf (2 launches; isfinite: 4)
        # a model still alive has had finite losses only: its first bad step is this one
        self.first_bad.masked_fill_(self.alive & ~finite, step)
        self.alive &= finite
        return self.alive

    def record(self, step: int, values: dict, extra: dict, elapsed: float) -> None:
        """Append one evaluation (``values``: [K] device tensors; ``extra[k]``: model k's user
        metrics) with one host sync. As ``train`` decides: a model whose loss was non-finite
        before this evaluation, or whose train loss (where evaluated) is non-finite now,
        closes instead."""
        bad = self.first_bad.tolist()
        values = {key: v.tolist() for key, v in values.items()}
        losses = values.get("train_loss")  # None: the rule leaves the training set out
        closed = []
        for k in self.open():
            h = self.histories[k]
            if bad[k] >= 0:
                h.diverged_at = bad[k]
            elif losses is not None and not math.isfinite(losses[k]):
                h.diverged_at = step
            else:
                h.append(step, time=elapsed, **{key: v[k] for key, v in values.items()},
                         **extra.get(k, {}))
                continue
            closed.append(k)
        if closed:
            self.alive[closed] = False

    def close(self) -> list[History]:
        """The final histories: a divergence after the last evaluation is still reported."""
        bad = self.first_bad.tolist()
        for k in self.open():
            if bad[k] >= 0:
                self.histories[k].diverged_at = bad[k]
        for h in self.histories:
            h.wall_time = time.perf_counter() - self.start
        return self.histories


def _train_chunk(model_fn, data: Dataset, spec: Spec, runs: list[Run], bar, report,
                 chunk: int | None = None, on_step=None, before_step=None):
    """Train one chunk of K models of one architecture as one batched computation.
    ``report(step) -> stop?`` is called at each evaluation; ``on_step(step, params)`` after
    each step, with the chunk's parameters (``{name: [K, ...] tensor}``, to read or edit in
    place); ``before_step(step, params, grads)`` before each optimizer step, with the
    gradients beside them. Returns (histories, parameters)."""
    device, K = data.device, len(runs)
    stack = _Stack(model_fn, runs, device)
    flat = stack.flat  # [K, N]: the parameters, read as views (stack.split)
    lr = torch.tensor([r.lr for r in runs], device=device)
    wd = torch.tensor([r.weight_decay for r in runs], device=device)
    state = init_state(spec.optimizer, [flat])
    train_rows = _Rows.of([r.train_rows for r in runs], len(data.x_train), device)
    test_rows = _Rows.of([r.test_rows for r in runs], len(data.x_test), device)
    # the recipe's evaluation rule says which sets an evaluation reads, as train's does
    has_test = spec.recipe.eval.test and len(data.x_test) > 0 and all(c > 0 for c in test_rows.counts)
    has_train = spec.recipe.eval.train
    batches = _Batches(train_rows, spec.batch_size, [r.seed for r in runs], device)
    row_chunk = max(64, 65536 // K)
    evals = set(spec.evals)
    rec = Evaluations(K, spec, device)

    def evaluate(step: int) -> tuple:
        """Evaluate every model now: (step, [K] device values, user metrics, seconds). In full
        batch the train-set metrics are left to the next step's forward pass, which sees the
        same parameters and rows (one forward pass saved per evaluation)."""
        values = {}
        if has_train and not deferred(step):
            values["train_loss"], values["train_acc"] = _eval_batched(
                stack, stack.split(flat), data.x_train, data.y_train, train_rows, spec.loss, data.n_classes, row_chunk)
        if has_test:
            values["test_loss"], values["test_acc"] = _eval_batched(
                stack, stack.split(flat), data.x_test, data.y_test, test_rows, spec.loss, data.n_classes, row_chunk)
        extra = {k: {m: float(v.detach() if torch.is_tensor(v) else v) for m, v in
                     measure(spec.metrics, stack.model(stack.split(flat), k), runs[k].data(data)).items()}
                 for k in rec.open()} if spec.metrics else {}
        return step, values, extra, time.perf_counter() - rec.start

    def deferred(step: int) -> bool:
        return has_train and batches.full and step < spec.steps

    pending = None  # an evaluation waiting for its train-set metrics (full batch)
    if 0 in evals:
        pending = evaluate(0)
        if not deferred(0):
            rec.record(*pending)
            pending = None
    for step in range(1, spec.steps + 1):
        if not rec.open():
            break
        idx, weight = batches.next()
        leaf = flat.detach().requires_grad_(True)  # a view: no copy
        out = stack(stack.split(leaf), data.x_train, idx)
        y = data.y_train if idx is None else data.y_train[idx]
        losses = _per_example_loss(spec.loss, out, y, data.n_classes)
        per_model = losses.mean(1) if weight is None else (losses * weight).sum(1) / weight.sum(1)
        if pending is not None:  # this forward pass is the previous evaluation's train pass
            with torch.no_grad():
                hits = (out.argmax(-1) == y).float()
                acc = hits.mean(1) if weight is None else (hits * weight).sum(1) / weight.sum(1)
            step_, values, extra, elapsed = pending
            rec.record(step_, dict(values, train_loss=per_model.detach().float(), train_acc=acc),
                       extra, elapsed)
            pending = None
        grads = torch.autograd.grad(per_model.sum(), [leaf])  # one [K, N] gradient
        flat = leaf.detach()
        with torch.no_grad():
            if before_step is not None:
                before_step(step, dict(zip(stack.names, stack.split(flat))),
                            dict(zip(stack.names, stack.split(grads[0]))))
            alive = rec.observe(step, per_model.detach())
            factor = 1.0 if spec.schedule is None else float(spec.schedule(step - 1))
            new_p, new_state = batched_step(spec.optimizer, [flat], grads, state, step, lr * factor,
                                            wd, momentum=spec.momentum, betas=spec.betas)
            # frozen models keep their values; written into the step's fresh tensors, so
            # that the step holds two copies of parameters and state at most (strategies.footprint)
            keep = _per_model(alive, flat)
            flat = torch.where(keep, new_p[0], flat, out=new_p[0])
            state = {key: [torch.where(keep, new[0], state[key][0], out=new[0])]
                     for key, new in new_state.items()}
            del new_p, new_state
            if stack.mask is not None:
                flat.mul_(stack.mask)
            if on_step is not None:
                on_step(step, dict(zip(stack.names, stack.split(flat))))
        if bar is not None:
            bar.update(1)
        if step in evals:
            pending = evaluate(step)
            if not deferred(step):
                rec.record(*pending)
                pending = None
            if report(step):
                break
    if pending is not None:  # stopped before the next forward pass: evaluate the train set
        step_, values, extra, elapsed = pending
        tl, ta = _eval_batched(stack, stack.split(flat), data.x_train, data.y_train, train_rows,
                               spec.loss, data.n_classes, row_chunk)
        rec.record(step_, dict(values, train_loss=tl, train_acc=ta), extra, elapsed)
    return rec.close(), dict(zip(stack.names, stack.split(flat)))


def train_batched(model_fn, data: Dataset, spec: Spec, runs: list[Run], chunk: int, bars, job,
                  on_step=None, before_step=None):
    """Group the runs by architecture, then train each group in chunks of ``chunk`` models;
    each chunk reports into its part of ``job`` (a :class:`dynamics.progress.Progress`)."""
    groups: dict = {}
    for k, run in enumerate(runs):
        groups.setdefault(_signature(model_fn, run.config), []).append(k)
    chunks = [ks[i:i + chunk] for ks in groups.values() for i in range(0, len(ks), chunk)]
    bar = None
    if bars_enabled(bars):
        from tqdm.auto import tqdm

        bar = tqdm(total=spec.steps * len(chunks), desc=f"{len(runs)} configs", leave=False)
    histories, states = [None] * len(runs), [None] * len(runs)
    try:
        for c, ks in enumerate(chunks):
            if job.stopped:  # the sweep was stopped: the rest keep empty histories
                for k in ks:
                    histories[k], states[k] = History(info=dict(steps=spec.steps, stopped=True)), {}
                continue
            part = job.part(c, len(chunks))
            done = lambda step, part=part: part.report(step / spec.steps)  # noqa: E731
            hs, params = _train_chunk(model_fn, data, spec, [runs[k] for k in ks], bar, done, chunk,
                                      on_step, before_step)
            for j, k in enumerate(ks):
                histories[k] = hs[j]
                states[k] = {n: t[j] for n, t in params.items()}
    finally:
        if bar is not None:
            bar.close()
    return histories, states

