"""Chapter 6's copying study: every run of a preset, trained and evaluated, published to book/data/copying/study.json.

    nohup env PYTHONPATH=. .venv/bin/python scripts/copying_study.py --preset default > results/copying_study.log 2>&1 &

The runs are :func:`accessibility_lib.runs.work.copying_runs` of the preset's chapter-6 parameters (pretrained
``nano`` and ``nano-mamba`` fine-tuned, the same architectures from scratch, small GPT-NeoX models of three
widths from scratch, and the length sweep), each made by :func:`accessibility_lib.runs.copying_outcomes.copying_outcome`
(the same function the chapter calls). Each finished run is added to the artifact at once, so a killed study
loses only the run in progress, and a re-run skips every run the artifact already holds for the same config and
evaluation, and a run killed mid-training resumes from its last checkpoint (``--checkpoint-every`` steps, in
the result store); trained weights stay in the result store (``$ACCESSIBILITY_RESULTS`` or ./results). Chapter 6 shows
an artifact's run only when its config key and evaluation parameters are exactly the chapter's.
"""

from __future__ import annotations

import argparse
import os
import time

#: runs done first: the cheap from-scratch models, then nano, then the slow state-space models (~0.3 s a step)
_ORDER = {"scratch": 0, "nano": 1, "nano-shape": 2, "nano-mamba": 3, "nano-mamba-shape": 4}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="default")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", nargs="*", default=None, help="run only labels containing one of these strings")
    ap.add_argument("--out", default=None, help="artifact path (default book/data/copying/study.json)")
    ap.add_argument("--checkpoint-every", type=int, default=100, help="steps between checkpoints (resume after a kill)")
    args = ap.parse_args(argv)

    import torch

    from accessibility_lib.ground.provenance import command_line, git_commit, machine_text, now_utc
    from accessibility_lib.ground.results import default_store
    from accessibility_lib.runs import copying_outcomes as CO
    from accessibility_lib.runs import presets
    from accessibility_lib.runs.work import copying_runs

    torch.set_num_threads(args.threads)
    params = presets.resolve("copying", args.preset)
    out = args.out or CO.STUDY_ARTIFACT
    store = default_store()
    command = command_line("env PYTHONPATH=. .venv/bin/python", "scripts/copying_study.py", argv=argv)
    runs = copying_runs(params)
    runs = [r for r in runs if args.only is None or any(s in r[0] for s in args.only)]
    first = params["train_max_len"]  # every model at the common training length first, then the sweeps
    runs.sort(key=lambda r: (r[1].train_max_len != first, _ORDER.get(r[1].base, 5), r[1].train_max_len, r[1].d_model))
    for label, cfg in runs:
        if CO.find_outcome(CO.load_artifact(out), cfg, params) is not None:
            print(f"[{now_utc()}] {label}: in the artifact already", flush=True)
            continue
        t0 = time.time()
        rec = CO.copying_outcome(label, cfg, params, store, params["device"], show_progress=False,
                                 threads=args.threads, checkpoint_every=args.checkpoint_every)  # fmt: skip
        rec["provenance"] = {"command": command, "commit": git_commit(), "machine": machine_text(args.threads),
                             "date": now_utc(), "wall_seconds": round(time.time() - t0, 1)}  # fmt: skip
        header = {"preset": args.preset, "params": {k: v for k, v in params.items() if k != "device"}}
        CO.write_artifact(out, header, label, rec)
        print(f"[{now_utc()}] {label}: steps {rec['train']['steps']}, reached {rec['train']['reached']}, "
              f"{rec['train']['seconds']:.0f} s, exact {rec['eval']['exact']}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    os.environ.setdefault("ACCESSIBILITY_PROGRESS", "0")
    raise SystemExit(main())
