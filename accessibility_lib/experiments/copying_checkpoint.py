"""Checkpoints of a copying fine-tuning in progress, so that a killed run resumes where it stopped.

A checkpoint is a folder (beside the run's store entry, ``<hash>.ckpt/``) holding

- ``model.<step>.safetensors``: the model's weights (tied weights stored once, ``safetensors.torch.save_model``);
- ``optim.<step>.safetensors``: AdamW's moment tensors and step counts, and torch's RNG state;
- ``state.json``: the step reached, the run's key hash, the loss and check histories, the wall time spent in
  earlier sessions, numpy's generator states (plain integers), and the optimizer's and scheduler's scalar
  settings.

Nothing is pickled: tensors go to safetensors, everything else to JSON. ``state.json`` is written last
(atomically, ``os.replace``) and names the two tensor files of its step, so a kill at any moment leaves
either the previous complete checkpoint or the new one, never a mixture; older tensor files are removed only
after the new ``state.json`` is in place. Restoring every state exactly (weights, moments, schedule, data
streams) makes a resumed run compute the same steps as one that was never interrupted
(``tests/unit/test_copying.py`` kills a training process and checks that).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import torch

__all__ = ["save_checkpoint", "load_checkpoint", "checkpoint_weights", "remove_checkpoint"]

_VERSION = 1


def _atomic_json(path: Path, value: dict) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(value))
    os.replace(tmp, path)


def save_checkpoint(folder: Path, key_hash: str, model, opt, sched, state: dict, rngs: dict) -> None:
    """Write the training state after ``state["step"]`` steps into ``folder`` (created if missing).

    Args:
        folder: the checkpoint folder of one run.
        key_hash: the run's cache-key hash (a checkpoint of another run is never loaded).
        model, opt, sched: the model, its ``torch.optim.AdamW`` and its ``LambdaLR`` schedule.
        state: JSON-able training state; must hold ``step`` (int, steps completed).
        rngs: name -> ``numpy.random.Generator`` whose states are saved.
    """
    from safetensors.torch import save_file, save_model

    folder.mkdir(parents=True, exist_ok=True)
    step = int(state["step"])
    sd = opt.state_dict()
    tensors = {"torch_rng": torch.get_rng_state()}
    for idx, entry in sd["state"].items():
        for name, value in entry.items():
            tensors[f"state.{idx}.{name}"] = torch.as_tensor(value).detach().cpu().contiguous()
    model_file, optim_file = f"model.{step}.safetensors", f"optim.{step}.safetensors"
    for name, write in ((model_file, lambda p: save_model(model, p)), (optim_file, lambda p: save_file(tensors, p))):
        tmp = folder / f".{name}.{os.getpid()}.tmp"
        write(str(tmp))
        os.replace(tmp, folder / name)
    record = {
        "version": _VERSION,
        "key_hash": key_hash,
        "model_file": model_file,
        "optim_file": optim_file,
        "param_groups": sd["param_groups"],
        "scheduler": {k: v for k, v in sched.state_dict().items() if k != "lr_lambdas"},
        "rngs": {name: g.bit_generator.state for name, g in rngs.items()},
        **state,
    }
    _atomic_json(folder / "state.json", record)  # the checkpoint exists from here on
    for old in folder.glob("*.safetensors"):
        if old.name not in (model_file, optim_file):
            old.unlink(missing_ok=True)


def load_checkpoint(folder: Path, key_hash: str, model, opt, sched, rngs: dict) -> dict | None:
    """Restore the state saved by :func:`save_checkpoint` into ``model``, ``opt``, ``sched`` and ``rngs``.

    Returns:
        The saved ``state`` (with ``step``), or None when there is no checkpoint in ``folder``.

    Raises:
        ValueError: if the checkpoint belongs to another run (key hash) or another checkpoint format, or
            its tensors do not fit the model (safetensors ``strict`` loading).
    """
    from safetensors.torch import load_file, load_model

    record = _read_record(folder, key_hash)
    if record is None:
        return None
    load_model(model, str(folder / record["model_file"]), strict=True)
    tensors = load_file(str(folder / record["optim_file"]))
    torch.set_rng_state(tensors.pop("torch_rng"))
    state: dict[int, dict] = {}
    for name, value in tensors.items():
        _, idx, field = name.split(".", 2)
        state.setdefault(int(idx), {})[field] = value
    groups = [{**g, "betas": tuple(g["betas"])} if "betas" in g else g for g in record["param_groups"]]
    opt.load_state_dict({"state": state, "param_groups": groups})
    sched.load_state_dict({**record["scheduler"], "lr_lambdas": [None] * len(opt.param_groups)})
    for name, g in rngs.items():
        g.bit_generator.state = record["rngs"][name]
    return _state_of(record)


def checkpoint_weights(folder: Path, key_hash: str, model, attempts: int = 3) -> dict | None:
    """Load only the model weights of the checkpoint in ``folder`` (read-only: a run may still be training).

    For an interim evaluation beside a running fine-tuning. The trainer replaces ``state.json`` and then
    deletes the previous step's tensors, so a read that loses that race retries with the new ``state.json``.

    Returns:
        The saved state (``step``, ``check_step``, ``check_exact``, ``seconds``, ...) without the optimizer's,
        or None when there is no checkpoint.

    Raises:
        ValueError: a checkpoint of another run or format, or weights that do not fit ``model``.
    """
    from safetensors.torch import load_model

    for attempt in range(attempts):
        record = _read_record(folder, key_hash)
        if record is None:
            return None
        try:
            load_model(model, str(folder / record["model_file"]), strict=True)
        except FileNotFoundError:
            if attempt == attempts - 1:
                raise
            continue
        return _state_of(record)
    return None


def _read_record(folder: Path, key_hash: str) -> dict | None:
    """``state.json`` of the checkpoint in ``folder`` (None if absent), refused if of another run or format."""
    path = folder / "state.json"
    if not path.exists():
        return None
    record = json.loads(path.read_text())
    if record.get("version") != _VERSION or record.get("key_hash") != key_hash:
        raise ValueError(
            f"checkpoint {folder} belongs to another run or format (key {record.get('key_hash')!r}, version "
            f"{record.get('version')!r}; expected {key_hash!r}, {_VERSION}): delete the folder to start afresh"
        )
    return record


def _state_of(record: dict) -> dict:
    """The training state of a checkpoint record, without the optimizer's and file entries."""
    drop = ("version", "key_hash", "model_file", "optim_file", "param_groups", "scheduler", "rngs")
    return {k: v for k, v in record.items() if k not in drop}


def remove_checkpoint(folder: Path) -> None:
    """Delete a finished run's checkpoint folder (no error if there is none)."""
    shutil.rmtree(folder, ignore_errors=True)
