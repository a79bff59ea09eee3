"""Predicted against measured n50 at the larger budget: the budget model's check, read from a cramming artifact.

The runner (``scripts/real_model_cramming.py``) stores each large-budget unit's prediction in the artifact before
the unit's first step (:mod:`accessibility_lib.runs.budget_model`, with the commit that made it). This reads every
unit with a stored prediction, re-fits its measured n50 from its outcomes and prints prediction against
measurement: whether the measurement lies in the prediction's 95 % interval (and in the span of both forms'
intervals), and the ratio measured / predicted. A unit not yet complete is listed as such. Nothing is crammed.

Usage::

    .venv/bin/python benchmarks/bench_budget_prediction.py --artifact book/data/cramming/benchmarks/budget/nano.json \\
        --json book/data/cramming/benchmarks/budget_prediction_nano.json     # the nano validation (issue 54)
    .venv/bin/python benchmarks/bench_budget_prediction.py --artifact book/data/cramming/smollm2-135m.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from accessibility_lib.ground import provenance, results
from accessibility_lib.ground.paths import BOOK_DATA
from accessibility_lib.runs.cramming_artifacts import upgrade
from accessibility_lib.runs.cramming_summary import summarize

#: the nano validation of the budget model (issue 54), what ``--tiny`` reads
TINY_ARTIFACT = BOOK_DATA / "cramming" / "benchmarks" / "budget" / "nano.json"


def rows_of(art: dict) -> list[dict]:
    """One row per unit with a stored prediction: uid, state, prediction, measured n50 and interval, verdicts."""
    by_uid = {s.uid: s for s in summarize(art)}
    out = []
    for u in art["units"]:
        pred = u.get("prediction")
        if not pred:
            continue
        s = by_uid[u["uid"]]
        row = {
            "uid": u["uid"],
            "state": s.state,
            "predicted": pred["n50"],
            "interval": pred["interval"],
            "form": pred["form"],
            "other_form": pred["other"],
            "like_for_like": pred.get("like_for_like"),
            "differs": pred.get("differs", ""),
            "predicted_by_commit": pred.get("commit"),
            "predicted_at": pred.get("made"),
        }
        if s.state == "complete" and s.fit is not None and s.fit.ok:
            n = float(s.fit.n50)
            lo, hi = pred["interval"]
            both = [min(lo, pred["other"]["interval"][0]), max(hi, pred["other"]["interval"][1])]
            row.update(
                measured=n,
                measured_interval=[float(c) for c in s.fit.ci],
                inside=bool(lo <= n <= hi),
                inside_either_form=bool(both[0] <= n <= both[1]),
                ratio=n / pred["n50"],
            )
        out.append(row)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--artifact", default=None, help="a cramming artifact (.json) whose units carry predictions")
    ap.add_argument("--json", default=None, help="write the comparison here")
    ap.add_argument(
        "--tiny", action="store_true", help=f"read the stored nano validation ({TINY_ARTIFACT}); write nothing"
    )
    args = ap.parse_args(argv)
    if args.tiny:
        args.artifact, args.json = args.artifact or str(TINY_ARTIFACT), None
    if args.artifact is None:
        ap.error("--artifact is required (or --tiny)")
    path = Path(args.artifact)
    if not path.exists():
        ap.error(f"--artifact {path}: no such file")
    art = upgrade(results.loads(path.read_text()))
    rows = rows_of(art)
    if not rows:
        print(f"{path}: no unit carries a prediction yet")
    for r in rows:
        lo, hi = r["interval"]
        head = f"{r['uid']}: predicted {r['predicted']:.1f} [{lo:.1f}, {hi:.1f}] ({r['form']})"
        if "measured" in r:
            mlo, mhi = r["measured_interval"]
            verdict = "inside" if r["inside"] else ("inside the other form's" if r["inside_either_form"] else "outside")
            print(f"{head}, measured {r['measured']:.1f} [{mlo:.1f}, {mhi:.1f}]: {verdict}, ratio {r['ratio']:.2f}")
        else:
            print(f"{head}, not measured yet ({r['state']})")
    done = [r for r in rows if "measured" in r]
    summary = {
        "units": len(rows),
        "measured": len(done),
        "inside": sum(r["inside"] for r in done),
        "inside_either_form": sum(r["inside_either_form"] for r in done),
        "median_ratio": None if not done else sorted(r["ratio"] for r in done)[len(done) // 2],
    }
    print(json.dumps(summary))
    if args.json:
        out = {
            "artifact": str(path),
            "summary": summary,
            "rows": rows,
            "provenance": {
                "command": provenance.command_line(
                    ".venv/bin/python", "benchmarks/bench_budget_prediction.py", argv=argv
                ),
                "commit": provenance.git_commit(),
                "date": provenance.now_utc(),
            },
        }
        Path(args.json).write_text(results.dumps(out, indent=1) + "\n")  # strict JSON (an open end as {"$float": ...})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
