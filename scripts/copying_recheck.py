"""Re-check a copying run of chapter 6's study on fresh strings: is a feature of its curve the model's or its strings'?

    nice env PYTHONPATH=. .venv/bin/python scripts/copying_recheck.py --run "nano (fine-tuned), n ≤ 12" --seeds 1 2

Retrains the run from the config stored in ``book/data/copying/study.json`` (into the result store, or loads it
from there), checks that the study's own evaluation (its seed) reproduces the stored exact-match counts, then
evaluates the same lengths on ``--seeds`` (fresh held-out strings, as many a length as the study used) and writes
``book/data/copying/recheck.json``: for each run, ``reproduced`` (the stored counts came out identical),
``lengths``, ``n_strings``, ``counts`` ({seed: exact-match counts a length}), the training steps, and provenance.
Chapter 6 reads it beside the study's curves (e.g. the rebound at n = 17).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, help="a run label of the study artifact")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2], help="fresh evaluation seeds")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)

    from accessibility_lib.experiments.copying import CopyTask, evaluate_copying
    from accessibility_lib.experiments.copying_model import TrainConfig, train_copying
    from accessibility_lib.ground.provenance import command_line, git_commit, machine_text, now_utc
    from accessibility_lib.ground.results import default_store
    from accessibility_lib.runs import copying_outcomes as CO

    study = CO.load_artifact(CO.STUDY_ARTIFACT) or {"runs": {}}
    if args.run not in study["runs"]:
        ap.error(f"--run {args.run!r} is not in {CO.STUDY_ARTIFACT}; its runs: {', '.join(sorted(study['runs']))}")
    if any(s < 0 for s in args.seeds):
        ap.error(f"--seeds must be seeds ≥ 0, got {args.seeds}")
    rec = study["runs"][args.run]
    cfg = TrainConfig.from_key(rec["config"])  # raises on a config of another training-code format
    t0 = time.time()
    model, info = train_copying(cfg, default_store(), show_progress=False, threads=args.threads)
    task, ep = CopyTask(cfg.alphabet_size), rec["eval_params"]
    lengths = [int(n) for n in rec["eval"]["length"]]

    def counts(seed: int) -> list[int]:
        ev = evaluate_copying(model, task, lengths, n_strings=ep["n_strings"], seed=seed, show_progress=False,
                              threads=args.threads)  # fmt: skip
        return [int(e) for e in ev["exact"]]

    stored = [int(e) for e in rec["eval"]["exact"]]
    again = counts(ep["seed"])
    entry = {
        "reproduced": again == stored,
        "lengths": lengths,
        "n_strings": int(ep["n_strings"]),
        "study_seed": int(ep["seed"]),
        "counts": {str(ep["seed"]): again, **{str(s): counts(s) for s in args.seeds if s != ep["seed"]}},
        "train_steps": {"study": int(rec["train"]["steps"]), "now": int(info["steps"])},
        "provenance": {"command": command_line("nice env PYTHONPATH=. .venv/bin/python", "scripts/copying_recheck.py",
                                               argv=argv),
                       "commit": git_commit(), "machine": machine_text(args.threads), "date": now_utc(),
                       "seconds": round(time.time() - t0, 1)},
    }  # fmt: skip
    out = Path(CO.COPYING_DATA) / "recheck.json"
    CO.write_artifact(out, {}, args.run, entry)  # atomic, under a lock; other runs' entries kept
    print(f"{args.run}: stored counts reproduced: {entry['reproduced']}; " + "; ".join(
        f"seed {s}: {dict(zip(lengths, c))}" for s, c in entry["counts"].items()) + f" -> {out}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
