"""Sweeps: units keyed in the store, bad input refused before any work, Ray equal to serial, kills lose nothing."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from accessibility_lib.ground.results import ResultStore
from accessibility_lib.runs import sweeps
from accessibility_lib.runs.parameters import ParameterError

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "accessibility_lib", "sweeps"]


def test_units_of_paper_tiny_mirror_the_paper_preset():
    tiny = sweeps.plan_work("paper_tiny")
    paper = sweeps.plan_work("paper", check_machine=False)
    assert [u.chapter for u in tiny] == [u.chapter for u in paper]
    assert sum(u.chapter == "cramming" for u in tiny) == 2  # one unit per target kind, its m = 1..5 in order
    assert sum(u.chapter == "support" for u in tiny) == 7  # one analysis per model
    # the paper's two bases at n ≤ 50, the first again at the sweep lengths below 50 (preset sweep_lens)
    from accessibility_lib.runs import presets

    lens = presets.PRESETS["copying"]["paper"]["sweep_lens"]
    assert sum(u.chapter == "copying" for u in tiny) == 2 + sum(L < 50 for L in lens) == 4
    for t, p in zip(tiny, paper):
        assert t.label == p.label.replace(p.model or "", t.model or "") if p.model else t.label == p.label
        if p.model:
            assert t.model == "standin:" + p.model
    keys = [json.dumps(u.key(), sort_keys=True) for u in tiny]
    assert len(set(keys)) == len(keys)
    assert all("device" not in json.dumps(u.key()) for u in tiny)  # where a unit ran is not part of its key


def test_overrides_apply_where_declared_and_unknown_ones_are_refused():
    units = sweeps.plan_work("paper_tiny", ["cramming"], {"ms": [1, 2], "cramming.n_targets": 2})
    assert [u.spec["ms"] for u in units] == [[1, 2], [1, 2]] and {u.spec["n_targets"] for u in units} == {2}
    with pytest.raises(sweeps.SweepError, match=r"\['colour'\] are parameters of none"):
        sweeps.plan_work("paper_tiny", ["cramming"], {"colour": "red"})
    with pytest.raises(sweeps.SweepError, match="chapters must be some of"):
        sweeps.plan_work("paper_tiny", ["theory"])
    with pytest.raises(ParameterError, match="'ms'"):
        sweeps.plan_work("paper_tiny", ["cramming"], {"ms": [0]})


def test_bad_device_model_folder_and_address_stop_before_any_work(tmp_path):
    with pytest.raises(ParameterError, match="'device'.*'cuda:7'"):
        sweeps.plan_work("paper_tiny", ["cramming"], device="cuda:7")
    empty = tmp_path / "model"
    empty.mkdir()
    (empty / "config.json").write_text("{}")
    units = sweeps.plan_work("paper_tiny", ["support"], {"models": [str(empty), "standin:Qwen/Qwen2.5-0.5B"]})
    with pytest.raises(sweeps.SweepError, match=r"(?s)1 model\(s\) cannot be loaded.*holds no \*\.safetensors weights"):
        sweeps.check_models(units)
    kept = sweeps.check_models(units, skip_unavailable=True, log=lambda _: None)
    assert [u.model for u in kept] == ["standin:Qwen/Qwen2.5-0.5B"]
    with pytest.raises(sweeps.SweepError, match="cannot be reached.*127.0.0.1:9"):
        sweeps.check_address("127.0.0.1:9")  # the discard port: nothing listens
    with pytest.raises(sweeps.SweepError, match="HOST:PORT"):
        sweeps.check_address("no-port-here")
    # the command: exit status 2, the message on stderr, nothing written
    store = tmp_path / "store"
    for args, expected in [
        (["--address", "127.0.0.1:9"], "cannot be reached"),
        (["--device", "cuda:7"], "cuda:7"),
        (["--chapters", "support", "-p", f'models=["{empty}"]'], "holds no *.safetensors"),
    ]:
        proc = subprocess.run(
            [*CLI, "--preset", "paper_tiny", "--results", str(store), *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=300,
        )
        assert proc.returncode == 2 and expected in proc.stderr, (args, proc.stdout, proc.stderr)
        assert not store.exists()


@pytest.mark.slow
def test_an_address_that_answers_but_is_no_ray_cluster_is_refused_before_any_work(tmp_path):
    server = socket.create_server(("127.0.0.1", 0))  # accepts TCP, speaks no Ray: as a proxy or another service
    port = server.getsockname()[1]
    stop = threading.Event()

    def serve():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.close()
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    store = tmp_path / "store"
    try:
        proc = subprocess.run(
            [
                *CLI,
                "--preset",
                "paper_tiny",
                "--chapters",
                "cramming",
                "--results",
                str(store),
                "--address",
                f"127.0.0.1:{port}",
                "--address-timeout",
                "15",  # it never answers as Ray: the probe runs to this timeout, whatever its length
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=300,
        )
    finally:
        stop.set()
        thread.join()
        server.close()
    assert proc.returncode == 2 and "no Ray cluster answered at" in proc.stderr, proc.stdout + proc.stderr
    assert not store.exists()


def _records(root: Path) -> dict:
    """unit label -> its result, and every cramming entry's key -> value (what the runs computed)."""
    store = ResultStore(root)
    units = {v["label"]: v["result"] for _, v in store.entries(sweeps.NAMESPACE)}
    cram = {json.dumps(k, sort_keys=True): v for k, v in store.entries("cramming")}
    return {"units": units, "cramming": cram}


def _files(root: Path) -> dict:
    return {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in (root / sweeps.NAMESPACE).glob("*.json")}


@pytest.mark.slow
def test_ray_equals_serial_and_a_killed_worker_loses_no_finished_unit(tmp_path):
    """The stand-in cramming sweep (3 units: one a target kind) serially, then over a local Ray with 2 workers where one worker
    is killed while it runs a unit: the same results, every unit finished before the kill untouched, and a
    second run finds everything done."""
    kinds = ["natural", "random_words", "random_tokens"]  # three units on two workers: one starts after a finish
    overrides = {"ms": [1, 2], "n_targets": 3, "max_steps": 12, "patience": 6, "kinds": kinds}
    units = sweeps.plan_work("paper_tiny", ["cramming"], overrides, device="cpu")
    serial = tmp_path / "serial"
    report = sweeps.run(units, serial, log=lambda _: None)
    assert len(report.ran) == 3 and not report.failed
    ray_root = tmp_path / "ray"
    cmd = [*CLI, "--preset", "paper_tiny", "--device", "cpu", "--chapters", "cramming", "--results", str(ray_root)]
    cmd += [arg for k, v in overrides.items() for arg in ("-p", f"{k}={json.dumps(v)}")]
    env = {**os.environ, "ACCESSIBILITY_PROGRESS": "0"}
    proc = subprocess.Popen([*cmd, "--ray", "--workers", "2"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    killed, before = None, {}
    deadline = time.time() + 400
    while killed is None and time.time() < deadline and proc.poll() is None:
        done = _files(ray_root) if (ray_root / sweeps.NAMESPACE).exists() else {}
        running = [json.loads(p.read_text()) for p in (ray_root / sweeps.NAMESPACE).glob("*.running")] if done else []
        if done and running:
            victim = max(running, key=lambda r: r["started"])  # just started: it will not finish in the meantime
            before = done
            os.kill(victim["pid"], signal.SIGKILL)  # a Ray worker process, started by this test's command
            killed = victim
        time.sleep(0.2)
    out, _ = proc.communicate(timeout=600)
    assert killed is not None, f"no unit was running after the first finished; output:\n{out}"
    assert proc.returncode == 0, out  # Ray re-ran the killed unit on another worker
    for path, (mtime, data) in before.items():  # finished before the kill: never rewritten
        assert path.stat().st_mtime_ns == mtime and path.read_bytes() == data
    rerun_record = next(v for _, v in ResultStore(ray_root).entries(sweeps.NAMESPACE) if v["label"] == killed["label"])
    assert rerun_record["pid"] != killed["pid"]  # the killed unit was redone by another worker
    assert _records(ray_root) == _records(serial)  # identical to the serial run, entry by entry
    again = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "3 units: 3 already in" in again.stdout, again.stdout + again.stderr
    assert _records(ray_root) == _records(serial)
