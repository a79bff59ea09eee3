"""The capacity card reads d and |V| from a config alone and applies Cor 4.6 / Thm 4.9."""

import json
import math
import re
import subprocess
import sys

import pytest

from accessibility_lib.theory import capacity

# Fields of EleutherAI/pythia-160m's config.json (public model card facts: GPT-NeoX, d = 768, |V| = 50304).
PYTHIA_160M_CONFIG = {
    "architectures": ["GPTNeoXForCausalLM"],
    "model_type": "gpt_neox",
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "vocab_size": 50304,
    "torch_dtype": "float16",
}


def test_card_from_config_file_gives_replication_slope(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(PYTHIA_160M_CONFIG))
    shape = capacity.read_shape(str(path))
    assert (shape.d_model, shape.d_vocab, shape.dtype) == (768, 50304, "float16")
    rows = {row["convention"]: row for row in capacity.capacity_card(shape)}
    # the authors' bound notebook: C = 590.09 for Pythia-160M under ε = r∞·2^-11
    assert round(rows["rinf_fp16"]["C"], 2) == 590.09
    assert rows["rinf_fp16"]["2r/eps"] == 4096
    assert rows["u_bf16"]["C"] < rows["rinf_fp16"]["C"] < rows["u_fp32"]["C"]


def test_card_cli_offline_from_folder_and_builtin(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(PYTHIA_160M_CONFIG))
    env = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-m", "accessibility_lib", "capacity", str(tmp_path), "EleutherAI/pythia-160m", "-m", "2"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    replication_lines = [line for line in out.stdout.splitlines() if "rinf_fp16" in line]
    assert len(replication_lines) == 2
    assert all("590.09" in line and "1180.2" in line for line in replication_lines)


def test_nested_text_config_and_errors(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"text_config": {"hidden_size": 640, "vocab_size": 262144}}))
    assert capacity.read_shape(str(tmp_path)).d_model == 640
    with pytest.raises(ValueError, match="no config found"):
        capacity.read_shape("no-such/model-xyz")
    (tmp_path / "bad.json").write_text(json.dumps({"foo": 1}))
    with pytest.raises(ValueError, match="hidden_size"):
        capacity.read_shape(str(tmp_path / "bad.json"))


def test_book_model_names_and_builtin_dtype():
    nano = capacity.read_shape("nano")  # the shipped model's own config.json
    assert (nano.d_model, nano.d_vocab) == (128, 4096)
    assert capacity.read_shape("EleutherAI/pythia-160m").dtype == "float16"


# --- input validation, accepted names, the book's models before they are fetched ---------------


@pytest.mark.parametrize("bad", [-2, 0, 1.5, True])
def test_prompt_length_must_be_a_positive_integer(bad):
    shape = capacity.read_shape("EleutherAI/pythia-160m")
    with pytest.raises(ValueError, match=r"m \(prompt length"):
        capacity.capacity_card(shape, m=bad)
    with pytest.raises(ValueError, match=r"m \(prompt length"):
        capacity.format_card(shape, m=bad)
    with pytest.raises(ValueError, match=r"q \(Wasserstein order"):
        capacity.capacity_card(shape, q=0.5)


@pytest.mark.parametrize(
    "args,word",
    [
        (["-m", "-2"], "prompt length m"),
        (["-m", "0"], "prompt length m"),
        (["-m", "two"], "prompt length m"),
        (["-q", "0.5"], "Wasserstein order q"),
    ],
)
def test_cli_refuses_bad_m_and_q(args, word):
    out = subprocess.run(
        [sys.executable, "-m", "accessibility_lib", "capacity", "EleutherAI/pythia-160m", *args],
        capture_output=True,
        text=True,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert out.returncode == 2 and out.stdout == "", out.stdout  # argparse's usage error; no card printed
    assert word in out.stderr and ">= 1" in out.stderr, out.stderr


def test_errors_list_every_accepted_name(monkeypatch, tmp_path):
    monkeypatch.setenv("ACCESSIBILITY_CACHE", str(tmp_path))
    names = capacity.accepted_names()
    # the book's own models and the paper's ten, by hub id and by the authors' list name
    for name in (
        "nano",
        "smollm2-135m",
        "gemma-3-270m",
        "EleutherAI/pythia-160m",
        "google/gemma-3-270m",
        "Qwen/Qwen2.5-1.5B",
        "meta-llama/Llama-3.2-1B",
        "Pythia-160M",
        "Gemma-3-270m",
    ):
        assert name in names
    assert len([n for n in names if "/" in n]) == 10  # the paper's ten models by hub id
    with pytest.raises(ValueError) as exc:
        capacity.read_shape("no-such/model-xyz")
    for name in names:
        assert name in str(exc.value), name
    for name in names:  # and every listed name really works, with no file fetched
        shape = capacity.read_shape(name)
        assert shape.d_model > 0 and shape.d_vocab > 1


def test_book_models_work_before_they_are_fetched(monkeypatch, tmp_path):
    monkeypatch.setenv("ACCESSIBILITY_CACHE", str(tmp_path))  # an empty cache: nothing fetched
    gemma = capacity.read_shape("gemma-3-270m")
    smol = capacity.read_shape("smollm2-135m")
    # the released models' config.json: Gemma-3-270M d = 640, |V| = 262144; SmolLM2-135M d = 576, |V| = 49152
    assert (gemma.d_model, gemma.d_vocab, gemma.dtype) == (640, 262144, "bfloat16")
    assert (smol.d_model, smol.d_vocab, smol.dtype) == (576, 49152, "bfloat16")
    assert "not fetched" in gemma.source
    rows = {row["convention"]: row for row in capacity.capacity_card(gemma, m=3)}
    # hand: C = d·ln(1 + 4096)/ln|V| = 640 × 8.318011 / 12.476649 = 426.68 tokens per vector (2r/ε = 4096)
    assert rows["rinf_fp16"]["C"] == pytest.approx(426.68, abs=0.01)
    assert rows["rinf_fp16"]["n_star"] == pytest.approx(3 * 426.68, abs=0.03)
    out = subprocess.run(
        [sys.executable, "-m", "accessibility_lib", "capacity", "gemma-3-270m", "Pythia-160M"],
        capture_output=True,
        text=True,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "ACCESSIBILITY_CACHE": str(tmp_path)},
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    cards = _parse_cards(out.stdout)
    assert list(cards) == ["gemma-3-270m", "Pythia-160M"]
    # hand: C = d·ln(1 + 2r/ε)/ln|V| per row, from the card's own d, |V| and 2r/ε; n* = C·m with m = 1
    for name, (d, V) in (("gemma-3-270m", (640, 262144)), ("Pythia-160M", (768, 50304))):
        rows = cards[name]
        assert [label.split()[0] for label, _ in rows] == ["rinf_fp16", "u_fp16", "u_bf16", "u_fp32", "table1_pythia"]
        for label, (ratio, C, n_star, _, _) in rows:
            assert C == pytest.approx(d * math.log1p(ratio) / math.log(V), rel=2e-4), (name, label)
            assert n_star == pytest.approx(C, abs=0.051), (name, label)
        assert rows[0][1][:2] == (4096, {"gemma-3-270m": 426.68, "Pythia-160M": 590.09}[name])
        assert rows[2][1][0] == 512 and rows[4][1][0] == pytest.approx(2**17, rel=1e-3)  # u_bf16, r·2^-16


def _parse_cards(stdout: str) -> dict[str, list[tuple[str, tuple[float, ...]]]]:
    """Cards of the capacity CLI: model -> [(convention label, (2r/ε, C, n*, ln ln, log10 n))] in printed order."""
    cards: dict[str, list] = {}
    name = None
    for line in stdout.splitlines():
        if line.startswith("Capacity card: "):
            name = line.split(": ", 1)[1].strip()
            cards[name] = []
            continue
        m = re.match(r"^  (\S.*?)\s+([0-9.e+]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$", line)
        if name is not None and m:
            cards[name].append((m.group(1), tuple(float(x) for x in m.groups()[1:])))
    return cards
