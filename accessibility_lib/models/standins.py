"""Stand-ins for the paper's models: tiny random-weight models with each model's architecture facts.

The ``paper`` preset names hub models (Pythia, Qwen2.5, Llama-3.2, Gemma-3) that a machine without the
Hugging Face hub cannot load, so their code paths would first run on a GPU box. A *stand-in* is built
locally, from a config, in a second: the same ``transformers`` class as the real model, the same
vocabulary size |V| (rows of the embedding and of the unembedding W_U), the same tied or untied head,
the same context length, special-token ids and BOS behaviour, and the family's specifics — GPT-NeoX's
partial rotary embedding and parallel residual with a head padded beyond the tokenizer (50,304 rows,
50,277 tokens); Qwen2's attention biases and grouped queries; Llama-3.2's ``llama3`` rotary scaling;
Gemma-3's √d input scaling, sliding-window layers and query pre-attention scalar — with a small width d
(:func:`standin_width`: d/256 heads of 16, at least 2) and two layers. Its weights are random
(``transformers``' own initialisation, seeded by the name), so its numbers say nothing about the real
model; what it exercises is the code: shapes, vocabulary sizes, padding rows, tied heads, BOS handling.

Names: ``"standin:" + hub id`` (``"standin:EleutherAI/pythia-160m"``), or the book's own model names
(``"standin:smollm2-135m"``, ``"standin:gemma-3-270m"``); :data:`ARCHITECTURES` lists them and
:func:`accessibility_lib.models.loading.load_model` resolves them through :func:`build_standin`.

The tokenizer is local too: a byte-level BPE trained with ``tokenizers`` on the library's shipped text
(the Austen novels and the held-out King James text, :data:`BASE_VOCAB` tokens; deterministic — the
same merges on every machine and process), laid out in the real model's id space: the special tokens
at their real ids (Pythia's ``<|endoftext|>`` at 0, Gemma's ``<pad> <eos> <bos> <unk>`` at 0–3, Qwen's
``<|endoftext|>`` at 151,643, Llama's ``<|begin_of_text|>`` at 128,000), the BPE tokens next, and
``<|dummy_N|>`` tokens (never produced by encoding) up to the tokenizer's real length. Every id below
``len(tokenizer)`` therefore decodes, random-token prompts use the whole vocabulary, and text encodes
to a few thousand distinct ids. Llama-3.2 and Gemma-3 stand-ins add a BOS in front of text, as the
real tokenizers do; Pythia and Qwen do not.

Sources of the architecture facts: each model's published ``config.json`` (hidden size, layers,
heads, key-value heads, head width, MLP width, vocabulary rows, context, tying, rotary settings,
special ids) and tokenizer length; d and |V| agree with the authors' model list
(:func:`accessibility_lib.theory.paper.models`), which a test checks, and the parameter counts of
:func:`n_params` with the published totals.

Example:
    >>> from accessibility_lib.models.standin_build import build_standin
    >>> model, tok = build_standin("standin:EleutherAI/pythia-160m")
    >>> model.get_output_embeddings().weight.shape[0], len(tok), model.config.hidden_size
    (50304, 50277, 48)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from accessibility_lib.ground.paths import DATA_DIR

__all__ = [
    "STANDIN_PREFIX",
    "Architecture",
    "ARCHITECTURES",
    "BASE_VOCAB",
    "is_standin",
    "architecture",
    "standin_name",
    "standin_width",
    "shrink",
    "n_params",
]

#: The prefix that marks a stand-in name in :func:`accessibility_lib.models.loading.load_model`.
STANDIN_PREFIX = "standin:"
#: Tokens of the trained byte-level BPE (256 bytes + merges) at the heart of every stand-in tokenizer.
BASE_VOCAB = 2048
_DATA = DATA_DIR
STANDIN_CORPORA = (_DATA / "corpora" / "austen.txt", _DATA / "nano" / "heldout.txt")


@dataclass(frozen=True)
class Architecture:
    """The facts of one model that a stand-in copies (all from its published config.json).

    Attributes:
        name: hub id (or the book's name for its fetched models).
        family: ``transformers`` model type: ``"gpt_neox"``, ``"qwen2"``, ``"llama"`` or ``"gemma3_text"``.
        d_model, n_layers, n_heads, n_kv_heads, head_dim, d_ff: widths and depth (d_ff: MLP width).
        d_vocab: rows of the embedding and of the unembedding W_U (|V| of the paper).
        n_tokens: ``len(tokenizer)`` (smaller than ``d_vocab`` for Pythia: padded rows).
        tied: whether the unembedding is the input embedding (``tie_word_embeddings``).
        n_ctx: context length (``max_position_embeddings``).
        specials: special token -> id (BOS/EOS/PAD/UNK of the real tokenizer).
        bos, eos, pad: those roles (names in ``specials``; None: the real tokenizer has none).
        adds_bos: whether the real tokenizer puts its BOS in front of text.
        extra: family-specific config values (rotary settings, sliding window, ...).
    """

    name: str
    family: str
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ff: int
    d_vocab: int
    n_tokens: int
    tied: bool
    n_ctx: int
    specials: dict = field(default_factory=dict)
    bos: str | None = None
    eos: str | None = None
    pad: str | None = None
    adds_bos: bool = False
    extra: dict = field(default_factory=dict)


def _pythia(name: str, d: int, layers: int, heads: int) -> Architecture:
    return Architecture(
        name,
        "gpt_neox",
        d,
        layers,
        heads,
        heads,
        d // heads,
        4 * d,
        50304,
        50277,
        False,
        2048,
        specials={"<|endoftext|>": 0, "<|padding|>": 1},
        bos="<|endoftext|>",
        eos="<|endoftext|>",
        extra={"rotary_pct": 0.25, "rope_theta": 10000.0},
    )


def _qwen25(name: str, d: int, layers: int, heads: int, d_ff: int, n_ctx: int) -> Architecture:
    return Architecture(
        name,
        "qwen2",
        d,
        layers,
        heads,
        2,
        d // heads,
        d_ff,
        151936,
        151665,
        True,
        n_ctx,
        specials={"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645},
        eos="<|endoftext|>",
        pad="<|endoftext|>",
        extra={"rope_theta": 1000000.0},
    )


_GEMMA3_270M = Architecture(
    "google/gemma-3-270m",
    "gemma3_text",
    640,
    18,
    4,
    1,
    256,
    2048,
    262144,
    262144,
    True,
    32768,
    specials={"<pad>": 0, "<eos>": 1, "<bos>": 2, "<unk>": 3},
    bos="<bos>",
    eos="<eos>",
    pad="<pad>",
    adds_bos=True,
    extra={
        "sliding_window": 512,
        "sliding_pattern": 6,
        "query_pre_attn_scalar": 256,
        "rope_theta": 1000000.0,
        "rope_local_theta": 10000.0,
    },
)

#: Architecture facts by name: the paper's models (hub ids) and the book's fetched real models.
ARCHITECTURES: dict[str, Architecture] = {
    a.name: a
    for a in [
        _pythia("EleutherAI/pythia-160m", 768, 12, 12),
        _pythia("EleutherAI/pythia-410m", 1024, 24, 16),
        _pythia("EleutherAI/pythia-1b", 2048, 16, 8),
        _pythia("EleutherAI/pythia-1.4b", 2048, 24, 16),
        _pythia("EleutherAI/pythia-2.8b", 2560, 32, 32),
        _qwen25("Qwen/Qwen2.5-0.5B", 896, 24, 14, 4864, 32768),
        _qwen25("Qwen/Qwen2.5-1.5B", 1536, 28, 12, 8960, 131072),
        Architecture(
            "meta-llama/Llama-3.2-1B",
            "llama",
            2048,
            16,
            32,
            8,
            64,
            8192,
            128256,
            128256,
            True,
            131072,
            specials={"<|begin_of_text|>": 128000, "<|end_of_text|>": 128001},
            bos="<|begin_of_text|>",
            eos="<|end_of_text|>",
            adds_bos=True,
            extra={
                "rope_theta": 500000.0,
                "rope_scaling": {
                    "rope_type": "llama3",
                    "factor": 32.0,
                    "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0,
                    "original_max_position_embeddings": 8192,
                },
            },
        ),
        _GEMMA3_270M,
        replace(_GEMMA3_270M, name="gemma-3-270m"),
        Architecture(
            "smollm2-135m",
            "llama",
            576,
            30,
            9,
            3,
            64,
            1536,
            49152,
            49152,
            True,
            8192,
            specials={"<|endoftext|>": 0, "<|im_start|>": 1, "<|im_end|>": 2},
            bos="<|im_start|>",
            eos="<|im_end|>",
            pad="<|im_end|>",
            extra={"rope_theta": 100000.0},
        ),
    ]
}


def is_standin(name: object) -> bool:
    """Whether ``name`` is a stand-in name (``"standin:..."``)."""
    return isinstance(name, str) and name.startswith(STANDIN_PREFIX)


def standin_name(name: str) -> str:
    """``"standin:" + name`` for a name in :data:`ARCHITECTURES` (a stand-in name is returned as it is).

    Raises:
        ValueError: ``name`` has no architecture facts here.
    """
    architecture(name)
    return name if is_standin(name) else STANDIN_PREFIX + name


def architecture(name: str) -> Architecture:
    """The real model's :class:`Architecture` for a model name or a stand-in name.

    Raises:
        ValueError (a :class:`~accessibility_lib.models.loading.ModelNotAvailableError` when raised through
            ``load_model``): no architecture facts for that name; the message lists the known names.
    """
    key = name[len(STANDIN_PREFIX) :] if is_standin(name) else name
    if key not in ARCHITECTURES:
        raise ValueError(
            f"no stand-in for {name!r}: stand-ins exist for {', '.join(STANDIN_PREFIX + k for k in ARCHITECTURES)}"
        )
    return ARCHITECTURES[key]


def standin_width(d_model: int) -> int:
    """The stand-in's width for a real width d: 16·max(2, round(d/256)) (heads of 16 dimensions)."""
    return 16 * max(2, round(d_model / 256))


def shrink(arch: Architecture, d_model: int | None = None, n_layers: int = 2) -> Architecture:
    """The stand-in's architecture: ``arch`` with width ``d_model`` (default :func:`standin_width`) and
    ``n_layers`` layers; heads of 16 dimensions, the MLP width in the real d_ff/d ratio, key-value heads
    grouped as in the real model (one for Gemma-3, fewer than query heads for Qwen and Llama).

    Raises:
        ValueError: ``d_model`` not a positive multiple of 16, ``n_layers`` < 1.
    """
    d = standin_width(arch.d_model) if d_model is None else int(d_model)
    if d < 16 or d % 16:
        raise ValueError(f"d_model must be a positive multiple of 16 (heads of 16 dimensions), got {d_model!r}")
    if int(n_layers) < 1:
        raise ValueError(f"n_layers must be >= 1, got {n_layers!r}")
    heads = d // 16
    if arch.n_kv_heads == arch.n_heads:
        kv = heads
    elif arch.n_kv_heads == 1:
        kv = 1
    else:
        kv = 2 if heads % 2 == 0 else 1
    d_ff = 16 * max(1, round(d * arch.d_ff / arch.d_model / 16))
    extra = dict(arch.extra)
    if "query_pre_attn_scalar" in extra:
        extra["query_pre_attn_scalar"] = 16  # the real model scales queries by its head width
    return replace(
        arch, d_model=d, n_layers=int(n_layers), n_heads=heads, n_kv_heads=kv, head_dim=16, d_ff=d_ff, extra=extra
    )


def n_params(arch: Architecture) -> int:
    """Parameters of the model with these facts (embedding and unembedding counted once when tied).

    Per layer: attention q, k, v, o (with Qwen's and GPT-NeoX's biases), the MLP (GPT-NeoX: two
    matrices with biases; Llama/Qwen/Gemma: gated, three matrices) and the norms (GPT-NeoX: two
    layer norms with bias; Llama/Qwen: two RMS norms; Gemma-3: four RMS norms plus q/k norms).
    """
    d, L, hd = arch.d_model, arch.n_layers, arch.head_dim
    q, kv = arch.n_heads * hd, arch.n_kv_heads * hd
    if arch.family == "gpt_neox":
        attn = d * 3 * q + 3 * q + q * d + d
        mlp = 2 * d * arch.d_ff + arch.d_ff + d
        norms = 4 * d
    else:
        attn = d * (q + 2 * kv) + q * d + (q + 2 * kv if arch.family == "qwen2" else 0)
        mlp = 3 * d * arch.d_ff
        norms = 2 * d if arch.family in ("qwen2", "llama") else 4 * d + 2 * hd
    final_norm = 2 * d if arch.family == "gpt_neox" else d
    emb = arch.d_vocab * d * (1 if arch.tied else 2)
    return int(L * (attn + mlp + norms) + final_norm + emb)
