"""The capacity card reads d and |V| from a config alone and applies Cor 4.6 / Thm 4.9."""

import json
import subprocess
import sys

import pytest

from accessibility_lib import capacity

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
    assert round(rows["replication"]["C"], 2) == 590.09
    assert rows["replication"]["2r/eps"] == 4096
    assert rows["bf16"]["C"] < rows["replication"]["C"] < rows["fp32"]["C"]


def test_card_cli_offline_from_folder_and_builtin(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(PYTHIA_160M_CONFIG))
    env = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-m", "accessibility_lib.capacity", str(tmp_path), "EleutherAI/pythia-160m", "-m", "2"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    replication_lines = [line for line in out.stdout.splitlines() if "replication" in line]
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
