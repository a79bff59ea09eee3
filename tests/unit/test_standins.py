"""Stand-ins of the paper's models: the real architecture facts, built locally, loadable by name."""

import subprocess
import sys

import pytest
import torch

from accessibility_lib.experiments.targets import tokenizer_adds_bos
from accessibility_lib.models import standin_build, standins
from accessibility_lib.models.fingerprint import weights_fingerprint
from accessibility_lib.models.loading import ModelNotAvailableError, load_model
from accessibility_lib.models.vocabulary import allowed_token_ids
from accessibility_lib.theory import paper

PAPER_PRESET_MODELS = [
    "EleutherAI/pythia-160m",
    "EleutherAI/pythia-410m",
    "EleutherAI/pythia-1b",
    "Qwen/Qwen2.5-0.5B",
    "Qwen/Qwen2.5-1.5B",
    "meta-llama/Llama-3.2-1B",
    "google/gemma-3-270m",
]

#: Published total parameter counts of the released checkpoints (model cards / safetensors metadata), an
#: independent check of every architecture fact that enters n_params (widths, depth, heads, MLP, |V|, tying).
PUBLISHED_PARAMS = {
    "EleutherAI/pythia-160m": 162_322_944,
    "EleutherAI/pythia-410m": 405_334_016,
    "EleutherAI/pythia-1b": 1_011_781_632,
    "EleutherAI/pythia-1.4b": 1_414_647_808,
    "EleutherAI/pythia-2.8b": 2_775_208_960,
    "Qwen/Qwen2.5-0.5B": 494_032_768,
    "Qwen/Qwen2.5-1.5B": 1_543_714_304,
    "meta-llama/Llama-3.2-1B": 1_235_814_400,
    "google/gemma-3-270m": 268_098_176,
    "smollm2-135m": 134_515_008,
}


def test_facts_agree_with_the_authors_model_list_and_published_sizes():
    listed = {m.hf_id: m for m in paper.models().values()}
    for name, arch in standins.ARCHITECTURES.items():
        if name in listed:
            assert (arch.d_model, arch.d_vocab) == (listed[name].d_model, listed[name].d_vocab), name
        published = PUBLISHED_PARAMS["google/gemma-3-270m" if name == "gemma-3-270m" else name]
        assert standins.n_params(arch) == published, name
    assert set(PAPER_PRESET_MODELS) <= set(standins.ARCHITECTURES)


@pytest.mark.parametrize("name", PAPER_PRESET_MODELS)
def test_standin_has_the_real_vocabulary_head_and_context(name):
    real = standins.architecture(name)
    h = load_model("standin:" + name)  # load_model verifies h @ W_U.T + b_U == the model's own logits
    assert h.name == "standin:" + name
    assert h.d_vocab == real.d_vocab and len(h.tokenizer) == real.n_tokens and h.n_ctx == real.n_ctx
    assert h.d_model == standins.standin_width(real.d_model) and h.config.num_hidden_layers == 2
    emb = h.model.get_input_embeddings().weight
    assert (h.W_U.data_ptr() == emb.data_ptr()) == real.tied  # tied head = the input embedding
    assert h.config.model_type == real.family
    for token, i in real.specials.items():
        assert h.tokenizer.convert_tokens_to_ids(token) == i
    expected_bos = real.specials[real.bos] if real.adds_bos else None
    assert tokenizer_adds_bos(h.tokenizer) == expected_bos
    ids = h.encode(["It is a truth universally acknowledged"])[0]
    logits = h.forward_logits(ids)
    assert torch.allclose(h.logits_from_embeddings(h.final_embeddings(ids)), logits, atol=1e-5)
    assert h.token_str(real.n_tokens - 1) == f"<|dummy_{real.n_tokens - 1}|>"  # every id decodes


def test_pythia_head_is_padded_beyond_the_tokenizer():
    h = load_model("standin:EleutherAI/pythia-160m")
    assert (h.d_vocab, len(h.tokenizer)) == (50304, 50277)
    allowed = allowed_token_ids(h.tokenizer, h.d_vocab)
    assert allowed.max() == 50276 and 0 not in allowed  # no padded row, no <|endoftext|>
    assert h.W_U.data_ptr() != h.model.get_input_embeddings().weight.data_ptr()  # untied


def test_gemma_scales_its_input_embeddings_by_sqrt_d():
    h = load_model("standin:google/gemma-3-270m")
    ids = torch.tensor([[2, 40, 41, 262143]])
    raw = h.model.get_input_embeddings().weight[ids[0]]  # (4, d): the stored rows
    d = h.d_model
    assert torch.allclose(h.embed(ids)[0], raw * torch.tensor(d**0.5), rtol=1e-6)
    layer_types = h.config.layer_types
    assert layer_types == ["sliding_attention", "full_attention"] and h.config.sliding_window == 512


def test_deterministic_and_leaves_the_callers_random_state_alone():
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    a = load_model("standin:Qwen/Qwen2.5-0.5B")
    after = torch.rand(3)
    assert torch.equal(before, after)
    b = load_model("standin:Qwen/Qwen2.5-0.5B")
    assert weights_fingerprint(a) == weights_fingerprint(b)
    other = load_model("standin:Qwen/Qwen2.5-1.5B")
    assert weights_fingerprint(a) != weights_fingerprint(other)


def test_tokenizer_training_is_the_same_in_every_process():
    code = (
        "import hashlib, json; from accessibility_lib.models.standin_build import _base_bpe; "
        "print(hashlib.sha256(json.dumps(_base_bpe()).encode()).hexdigest())"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(seed), "RAYON_NUM_THREADS": str(threads), "PATH": "/usr/bin:/bin"},
        ).stdout.strip()
        for seed, threads in [(1, 1), (2, 2)]
    }
    assert len(digests) == 1 and len(next(iter(digests))) == 64


def test_unknown_standin_and_bad_sizes_are_clear_errors():
    with pytest.raises(ModelNotAvailableError, match="no stand-in for 'standin:acme/gpt-9'.*standin:EleutherAI"):
        load_model("standin:acme/gpt-9")
    with pytest.raises(ValueError, match="multiple of 16"):
        standin_build.build_standin("standin:EleutherAI/pythia-160m", d_model=40)
    model, _ = standin_build.build_standin("standin:EleutherAI/pythia-160m", d_model=96, n_layers=3)
    assert model.config.hidden_size == 96 and model.config.num_hidden_layers == 3
