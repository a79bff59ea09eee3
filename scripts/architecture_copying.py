"""The copying cliff of the book's transformer (nano) and state-space model (nano-mamba), like for like (chapter 7).

    nice -n 10 .venv/bin/python scripts/architecture_copying.py --models nano nano-mamba

Each model is a *pretrained* base cut to the copy task's |V| + 4 rows (the paper's recipe for Pythia,
:mod:`accessibility_lib.experiments.copying_model`) and fine-tuned whole on strings x|x with the same settings
(chapter 6's ``default`` preset, except the learning rate, which suits fine-tuning: 1e-3); the exact match
against length is then measured on held-out strings (50 per length, greedy decoding) with Wilson
intervals. Trained weights and evaluations land in the result store (``$ACCESSIBILITY_RESULTS`` or
./results), so a re-run resumes: a finished model is loaded, not retrained. The artifact
``book/data/copying/architectures.json`` is rewritten after every model, with per-length counts (the
chapter re-fits the sigmoid from them), the last-layer radii r and r∞ at copy positions, the training
summary and the provenance (command, commit, machine, date).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARTIFACT = ROOT / "book" / "data" / "copying" / "architectures.json"

#: chapter 6's default preset (alphabet, context, lengths, batch, schedule, evaluation), lr 1e-3 for fine-tuning
SETTINGS = {
    "alphabet_size": 26,
    "context": 64,
    "train_min_len": 1,
    "train_max_len": 8,
    "batch_size": 32,
    "lr": 1e-3,
    "warmup_steps": 30,
    "max_steps": 2500,
    "check_every": 25,
    "seed": 0,
}
EVAL_LENGTHS = [2, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 20, 24]
N_STRINGS = 50


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["nano", "nano-mamba"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=str(ARTIFACT))
    args = ap.parse_args(argv)

    import numpy as np
    import torch

    from accessibility_lib.experiments import copying, copying_model
    from accessibility_lib.ground.provenance import command_line, git_commit, machine_text, now_utc
    from accessibility_lib.ground.results import default_store, dumps, loads

    torch.set_num_threads(args.threads)
    store = default_store()
    out_path = Path(args.out)
    art = loads(out_path.read_text()) if out_path.exists() else {"models": {}}
    art["settings"] = {**SETTINGS, "eval_lengths": EVAL_LENGTHS, "n_strings": N_STRINGS}
    command = command_line("nice -n 10 .venv/bin/python", "scripts/architecture_copying.py", argv=argv)
    task = copying.CopyTask(SETTINGS["alphabet_size"])
    for name in args.models:
        t0 = time.time()
        cfg = copying_model.TrainConfig(base=name, **SETTINGS)
        model, info = copying_model.train_copying(cfg, store=store, show_progress=False, threads=args.threads)
        res = copying_model.evaluate_run(cfg, model, EVAL_LENGTHS, n_strings=N_STRINGS, seed=SETTINGS["seed"],
                                         store=store, threads=args.threads)  # fmt: skip
        h = copying_model.final_embeddings(model, task, [SETTINGS["train_max_len"]], n_strings=32, seed=0)  # (N, d)
        art["models"][name] = {
            "base": name,
            "architecture": type(model).__name__,
            "d_model": int(model.config.hidden_size),
            "n_params": int(sum(p.numel() for p in model.parameters())),
            "train": {k: info[k] for k in ("steps", "seconds", "reached", "cached")},
            "train_check_exact_last": float(info["check_exact"][-1]) if len(info["check_exact"]) else None,
            "eval": {k: np.asarray(v).tolist() for k, v in res.items()},
            "r": float(np.linalg.norm(h, axis=1).max()),
            "r_inf": float(np.abs(h).max()),
            "provenance": {
                "command": command,
                "commit": git_commit(),
                "machine": machine_text(args.threads),
                "date": now_utc(),
                "wall_seconds": round(time.time() - t0, 1),
            },  # fmt: skip
        }
        out_path.parent.mkdir(parents=True, exist_ok=True)
        if out_path.exists():  # another invocation may have added a model meanwhile: merge, never drop it
            art["models"] = {**loads(out_path.read_text())["models"], name: art["models"][name]}
        tmp = out_path.with_suffix(f".json.{os.getpid()}.tmp")
        tmp.write_text(dumps(art, indent=1) + "\n")
        os.replace(tmp, out_path)
        print(f"[{now_utc()}] {name}: steps {info['steps']}, reached {info['reached']}, exact {res['exact'].tolist()} "
              f"-> {out_path}", flush=True)  # fmt: skip
        del model
    return 0


if __name__ == "__main__":
    os.environ.setdefault("ACCESSIBILITY_PROGRESS", "0")
    raise SystemExit(main())
