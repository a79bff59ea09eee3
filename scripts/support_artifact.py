"""Write a model's support analysis (chapter 5: geometry and both Table 1 columns) as a stored artifact.

    .venv/bin/python scripts/support_artifact.py --model gemma-3-270m

The artifact (``book/data/support/<model>.json``) lets the book show the model's Table 1 column when the
model is not fetched (the main job fetches only SmolLM2-135M); the chapter recomputes it when the model
is available. The sizes are the chapter's ``default`` preset (see accessibility_lib/presets.py) unless
given; the command, commit, machine, date and wall time are recorded in the artifact.
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv: list[str] | None = None) -> int:
    from accessibility_lib.models import fingerprint
    from accessibility_lib.runs import presets

    nano = presets.PRESETS["support"]["default"]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="a load_model name, e.g. gemma-3-270m")
    ap.add_argument("--n-prompts", type=int, default=nano["n_prompts"])
    ap.add_argument("--lengths", default=",".join(str(x) for x in nano["lengths"]))
    ap.add_argument("--cell-samples", type=int, default=nano["cell_samples"])
    ap.add_argument("--cell-flops", type=float, default=nano["cell_flops"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out-dir", default=None)
    args = ap.parse_args(argv)

    import torch

    from accessibility_lib.geometry import support
    from accessibility_lib.ground import provenance
    from accessibility_lib.ground.results import default_store
    from accessibility_lib.models.loading import load_model
    from accessibility_lib.runs.work import run_support

    torch.set_num_threads(args.threads)
    t0 = time.time()
    handle = load_model(args.model)
    params = {
        **nano,
        "n_prompts": args.n_prompts,
        "lengths": [int(x) for x in args.lengths.split(",")],
        "cell_samples": args.cell_samples,
        "cell_flops": args.cell_flops,
    }
    res = run_support(handle, args.model, params, default_store())
    variants = None
    if getattr(handle._base, "norm", None) is not None and hasattr(handle._base.norm, "weight"):
        variants = support.radius_variants(handle)
        print("radius variants:", variants)
    argv_ = argv if argv is not None else sys.argv[1:]
    prov = {
        "command": provenance.command_line(".venv/bin/python", "scripts/support_artifact.py", argv=argv_),
        "commit": provenance.git_commit(),
        "machine": provenance.machine_text(args.threads),
        "date": provenance.now_utc(),
        "wall_seconds": round(time.time() - t0, 1),
        "weights": fingerprint.weights_fingerprint(handle),
        "radius_variants": variants,
    }
    path = support.write_artifact(res, None if args.out_dir is None else f"{args.out_dir}/{args.model}.json", prov)
    print(f"wrote {path} in {prov['wall_seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
