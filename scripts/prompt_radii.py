"""The scale a crammed prompt is compared with: the norms of the real input embeddings, per model.

    .venv/bin/python scripts/prompt_radii.py --model smollm2-135m gemma-3-270m nano

Writes ``book/data/cramming/radii.json`` (merged with what is there): for each model the largest and
median L2 norm and the largest |coordinate| of its real input embeddings (every non-special token id,
through ``handle.embed``, so Gemma's √d scaling is included) — the vectors a hard prompt is made of.
Chapter 3 sets the crammed soft prompts' norms beside them and beside the last-layer radius r of the
bound, which it reads from chapter 5's support artifact (``book/data/support``), so that both chapters
use one r. Theorem 4.5 packs prompts in a ball, and the book had never measured where the crammed
prompts lie. Provenance (command, commit, machine, date) is stored with each model.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from accessibility_lib.ground import provenance
from accessibility_lib.ground.paths import BOOK_DATA
from accessibility_lib.models.loading import load_model
from accessibility_lib.models.vocabulary import allowed_token_ids

OUT = BOOK_DATA / "cramming" / "radii.json"


@torch.no_grad()
def radii(name: str) -> dict:
    handle = load_model(name, dtype=torch.float32)
    ids = torch.as_tensor(allowed_token_ids(handle.tokenizer, int(handle.d_vocab)))
    norms, linf = [], 0.0
    for chunk in ids.split(8192):
        e = handle.embed(chunk[None, :])[0].float()  # (k, d_model)
        norms.append(e.norm(dim=1).numpy())
        linf = max(linf, float(e.abs().max()))
    norms = np.concatenate(norms)
    return {
        "d_model": int(handle.d_model),
        "input_tokens": int(ids.numel()),
        "input_l2_max": float(norms.max()),
        "input_l2_median": float(np.median(norms)),
        "input_linf": linf,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", nargs="+", required=True)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    data = json.loads(OUT.read_text()) if OUT.exists() else {}
    for name in args.model:
        t0 = time.time()
        rec = radii(name)
        rec["provenance"] = {
            "command": provenance.command_line(".venv/bin/python", "scripts/prompt_radii.py", argv=argv or None),
            "commit": provenance.git_commit(),
            "machine": provenance.machine_text(1),
            "date": provenance.now_utc(),
            "seconds": round(time.time() - t0, 1),
        }
        data[name] = rec  # replaces the model's record whole (older records also held h radii)
        print(name, {k: v for k, v in rec.items() if k != "provenance"}, flush=True)
    Path(OUT).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
