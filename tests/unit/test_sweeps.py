"""Sweeps: units keyed in the store, bad input refused before any work, Ray equal to serial, kills lose nothing."""

import contextlib
import json
import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from accessibility_lib.ground.results import ResultStore
from accessibility_lib.runs import sweeps
from accessibility_lib.runs.parameters import ParameterError

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "accessibility_lib", "sweeps"]


@pytest.fixture(autouse=True)
def ray_files_in_a_temporary_folder(monkeypatch):
    """Every Ray this module starts (in its subprocesses, which inherit the environment) keeps its session files
    under a temporary folder (``RAY_TMPDIR``, else ``/tmp/ray``, shared with every other Ray on the machine) and
    takes its token from ``RAY_AUTH_TOKEN`` (else Ray 2.60, whose new clusters use token authentication, writes
    ``~/.ray/auth_token``).
    The folder's path is short: Ray's socket paths inside it must stay under 108 characters."""
    folder = tempfile.mkdtemp(prefix="ray-")
    monkeypatch.setenv("RAY_TMPDIR", folder)
    monkeypatch.setenv("RAY_AUTH_TOKEN", secrets.token_hex(32))
    monkeypatch.setenv("RAY_AUTH_MODE", "token")  # as a new cluster's default; a driver given an address needs it
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    yield Path(folder)
    shutil.rmtree(folder, ignore_errors=True)


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


class _FakeRay:
    """The four calls of ``ray`` that sweep_checks.check_placement makes, on a cluster of given resources whose
    probe task is never placed (or, ``places=True``, is placed at once)."""

    def __init__(self, total: dict, free: dict | None = None, places: bool = False):
        self.total, self.free, self.places, self.cancelled, self.asked = total, free or total, places, [], []

    def cluster_resources(self):
        return dict(self.total)

    def available_resources(self):
        return dict(self.free)

    def remote(self, **opts):
        self.asked.append(opts)
        return lambda fn: type("Task", (), {"remote": staticmethod(lambda: "probe")})

    def wait(self, refs, timeout=None):
        self.waited = timeout
        return (refs, []) if self.places else ([], refs)

    def cancel(self, ref):
        self.cancelled.append(ref)


def test_a_cluster_that_cannot_place_a_unit_is_named_and_not_waited_on():
    from accessibility_lib.runs.sweep_checks import check_placement

    head = {"memory": 1e9, "object_store_memory": 1e9, "node:127.0.0.1": 1.0}  # ray.init(num_cpus=0): no CPU key
    with pytest.raises(
        sweeps.SweepError,
        match=r"\(HOST:1\) cannot place a unit: each asks for 1 CPU and the cluster has 0 CPU \(CPU missing\).*no unit was started.*joins",
    ):
        check_placement(_FakeRay(head), gpu=False, where="HOST:1")
    with pytest.raises(sweeps.SweepError, match=r"1 CPU and 1 GPU and the cluster has 4 CPU and 0 GPU \(GPU missing\)"):
        check_placement(_FakeRay({**head, "CPU": 4.0}), gpu=True)
    busy = _FakeRay({**head, "CPU": 4.0, "GPU": 1.0}, free={"CPU": 0.0, "GPU": 1.0})  # every CPU held by other work
    with pytest.raises(sweeps.SweepError, match=r"within 7 s .*: 0 CPU and 1 GPU free of 4 and 1; no unit was started"):
        check_placement(busy, gpu=True, timeout=7)
    assert (
        busy.waited == 7
        and busy.cancelled == ["probe"]
        and busy.asked == [{"num_cpus": 1, "num_gpus": 1, "max_retries": 0}]
    )
    ok = _FakeRay({**head, "CPU": 1.0}, places=True)
    assert check_placement(ok, gpu=False)["CPU"] == 1.0 and ok.cancelled == []


def test_placement_stalls_only_when_no_unit_of_the_sweep_runs(tmp_path):
    from accessibility_lib.runs.sweep_checks import placement_stalled

    since = time.time() - 100
    (tmp_path / "old.running").write_text("{}")
    os.utime(tmp_path / "old.running", (since - 50, since - 50))  # a marker left by an earlier, killed run
    assert placement_stalled(tmp_path, since, last_finish=since, timeout=60)  # 100 s without a finish or a runner
    assert not placement_stalled(tmp_path, since, last_finish=time.time() - 10, timeout=60)  # a unit finished 10 s ago
    (tmp_path / "new.running").write_text("{}")  # a unit of this sweep runs: it may run for hours
    assert not placement_stalled(tmp_path, since, last_finish=since, timeout=60)


@contextlib.contextmanager
def _ray_head(**init):
    """A Ray head in a child process started by ``ray.init(**init)``; yields its address and shuts it down after.
    Ray gives its raylet 30 s to start: on a busy machine the start is tried three times (as the sweeps do)."""
    code = (
        "import json, ray, sys; ctx = ray.init(include_dashboard=False, configure_logging=False, **json.loads(sys.argv[1])); "
        "print(ctx.address_info['gcs_address'], flush=True); sys.stdin.read(); ray.shutdown()"
    )
    for attempt in range(3):
        head = subprocess.Popen(
            [sys.executable, "-c", code, json.dumps(init)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            address = head.stdout.readline().strip() if select.select([head.stdout], [], [], 300)[0] else ""
            if address:
                yield address
                return
            assert attempt < 2 and "timed out during startup" in head.communicate(timeout=60)[1], "no Ray head started"
        finally:
            if head.poll() is None:
                head.stdin.close()  # the head shuts its Ray down
                try:
                    head.wait(60)
                except subprocess.TimeoutExpired:
                    head.kill()
                    head.wait()


@pytest.mark.slow
def test_a_ray_head_without_cpus_is_refused_before_any_unit(tmp_path):
    """A Ray head started with ``ray.init(num_cpus=0)`` (no worker joined): the sweep names the missing CPU and
    exits 2 before submitting anything, where it used to print "1 units submitted" and wait forever
    (ray-project/ray#45909)."""
    store = tmp_path / "store"
    cmd = [*CLI, "--preset", "smoke", "--device", "cpu", "--chapters", "support", "--results", str(store)]
    with _ray_head(num_cpus=0) as address:  # before the check, the command below ran into this timeout
        proc = subprocess.run([*cmd, "--address", address], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    # the cluster's totals refuse it, not the placement probe's wait (its message says "did not place ... within")
    assert "cannot place a unit: each asks for 1 CPU and the cluster has 0 CPU (CPU missing)" in proc.stderr
    assert "submitted" not in proc.stdout and not store.exists()


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
