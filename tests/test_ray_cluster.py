"""``--address`` against a real Ray cluster: a head and a second node on this machine, the second one
killed mid-run; results equal a local run's. The cluster uses token authentication as ``ray start``
sets it up, and is stopped by killing only its own processes (tests/helpers/ray_cluster.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ray")

from tests.helpers.ray_cluster import LocalCluster
from training.common.ray_cluster import MARK, below, marked, processes  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray_cluster")]  # one cluster with --dist loadgroup
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    c = LocalCluster().start()
    try:
        c.add_node()
        yield c
    finally:
        c.stop()
    assert not c.own_processes(), "the cluster's processes outlived it"


def command(*argv: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", *argv],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 600) -> tuple[str, str]:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    return out, err


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.is_file() else 0


def kill_node_mid_run(cluster: LocalCluster, proc: subprocess.Popen[str], progress: Path, total: int) -> None:
    """Wait until some jobs of ``proc`` finished, then kill the joined node while the rest run."""
    deadline = time.monotonic() + 300
    while lines(progress) < 2:
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "no job finished in 300 s"
        time.sleep(0.2)
    cluster.kill_node()
    assert proc.poll() is None and lines(progress) < total, "the run ended before the node was killed"


def test_an_evaluation_on_the_cluster_survives_a_lost_node_and_equals_a_local_one(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    if cluster.nodes == 0:
        cluster.add_node()
    args = [
        "greedy",
        "--opponents",
        "random",
        "lookahead",
        "--games",
        "300",
        "--chunk-games",
        "20",
        "--seed",
        "3",
    ]
    remote = command(
        "training.evaluate", *args, "--backend", "ray", "--address", cluster.address,
        "--out", str(tmp_path / "ray"), "--json", str(tmp_path / "ray.json"),
    )  # fmt: skip
    kill_node_mid_run(cluster, remote, tmp_path / "ray" / "chunks.progress.jsonl", 30)
    finish(remote)
    finish(command("training.evaluate", *args, "--json", str(tmp_path / "local.json")))
    ray_results = json.loads((tmp_path / "ray.json").read_text())
    local_results = json.loads((tmp_path / "local.json").read_text())
    assert ray_results == local_results


def test_a_tournament_on_the_cluster_survives_a_lost_node_and_equals_a_local_one(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    if cluster.nodes == 0:
        cluster.add_node()
    args = ["--agents", "random", "greedy", "lookahead", "--games", "40", "--seed", "5", "--no-progress"]
    remote = command(
        "training.tournament",
        *args,
        "--backend",
        "ray",
        "--address",
        cluster.address,
        "--out",
        str(tmp_path / "ray"),
    )
    progress = next_progress_file(tmp_path / "ray", remote)
    kill_node_mid_run(cluster, remote, progress, 10**6)
    finish(remote)
    finish(command("training.tournament", *args, "--out", str(tmp_path / "local")))
    summaries = [json.loads((tmp_path / d / "summary.json").read_text()) for d in ("ray", "local")]
    for key in ("matrix", "ratings", "mean_turns", "truncated", "games"):
        assert summaries[0][key] == summaries[1][key], key


def next_progress_file(folder: Path, proc: subprocess.Popen[str]) -> Path:
    """The tournament's progress file, once it exists."""
    deadline = time.monotonic() + 120
    while True:
        found = [p for p in folder.glob("*.jsonl")] if folder.is_dir() else []
        if found:
            return found[0]
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline
        time.sleep(0.2)


def kill_node_while_it_runs_a_job(
    cluster: LocalCluster, proc: subprocess.Popen[str], not_yet: Path, seconds: float = 300
) -> None:
    """Kill the joined node at a moment it runs one of ``proc``'s jobs (a ``ray::run_attempt`` worker
    there), and while ``not_yet`` (the file the step under test writes when it is done) does not exist."""
    deadline = time.monotonic() + seconds
    while not cluster.running_on_last_node():
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert not not_yet.exists(), f"{not_yet} written before the joined node ran a job"
        assert time.monotonic() < deadline, f"the joined node ran no job in {seconds:.0f} s"
        time.sleep(0.05)
    cluster.kill_node()
    assert proc.poll() is None and not not_yet.exists(), "the step ended before the node was killed"


def search_run(tmp_path: Path, name: str, *where: str) -> subprocess.Popen[str]:
    """The smallest search-training run (one iteration of 6 self-play games) as a command."""
    import yaml

    from tests.helpers.search_runs import tiny

    config = tmp_path / f"{name}.yaml"
    config.write_text(yaml.safe_dump(tiny(tmp_path / name, selfplay__games=6)))
    return command(
        "training.search_train", "--config", str(config), "--workers", "2", "--no-progress", *where
    )


def search_results(run: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A finished search run's ``state.json`` (without what the clock decides) and replay buffer."""
    from tests.helpers.search_runs import untimed

    ckpt = run / "run" / "checkpoints"
    with np.load(ckpt / "buffer.npz") as data:
        buffer = {key: data[key] for key in data.files}
    return untimed(json.loads((ckpt / "state.json").read_text())), buffer


def test_a_search_training_iteration_on_the_cluster_survives_a_lost_node_and_equals_a_local_one(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    """The joined node is killed while it plays a self-play game (before the self-play checkpoint): its
    job runs again on the head, and the iteration's buffer and state are the local run's."""
    if cluster.nodes == 0:
        cluster.add_node()
    remote = search_run(tmp_path, "ray", "--backend", "ray", "--address", cluster.address)
    kill_node_while_it_runs_a_job(cluster, remote, tmp_path / "ray" / "run" / "checkpoints" / "state.json")
    finish(remote)
    finish(search_run(tmp_path, "local"))
    (ray_state, ray_buffer), (local_state, local_buffer) = (
        search_results(tmp_path / name) for name in ("ray", "local")
    )
    assert ray_state["iteration"] == local_state["iteration"] == 1
    assert ray_state == local_state
    assert ray_buffer.keys() == local_buffer.keys()
    for key in local_buffer:
        np.testing.assert_array_equal(ray_buffer[key], local_buffer[key])


def test_a_cluster_that_refuses_the_token_gets_one_line_saying_what_to_set(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    bad = tmp_path / "token"
    bad.write_text("0" * 64)
    proc = command(
        "training.evaluate", "greedy", "--opponents", "random", "--games", "2",
        "--backend", "ray", "--address", cluster.address,
        env={"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(bad)},
    )  # fmt: skip
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, err[-2000:]
    last = err.strip().splitlines()[-1]
    assert "refused this client" in last and "RAY_AUTH_MODE=token" in last and "auth_token" in last, err[
        -2000:
    ]


def descendants(pid: int) -> set[int]:
    """The processes below ``pid`` now."""
    return below(processes(), {pid}) - {pid}


def evaluation_on_a_private_runtime(tmp_path: Path) -> tuple[subprocess.Popen[str], set[int]]:
    """An evaluation on its own Ray runtime, once a chunk has finished, and the processes below it."""
    proc = command(
        "training.evaluate", "greedy", "--opponents", "random", "lookahead", "--games", "400",
        "--chunk-games", "10", "--backend", "ray", "--workers", "2", "--out", str(tmp_path / "run"),
    )  # fmt: skip
    progress = tmp_path / "run" / "chunks.progress.jsonl"
    deadline = time.monotonic() + 300
    while lines(progress) < 1:
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline
        time.sleep(0.2)
    under = descendants(proc.pid)
    assert under, "Ray's processes should run below the command"
    return proc, under


def test_sigterm_ends_a_command_on_a_private_ray_runtime_with_143_and_no_process_left(tmp_path: Path) -> None:
    """``ray.init`` replaces the SIGTERM handler (exit 1 and a C++ stack dump); the command puts it back."""
    proc, under = evaluation_on_a_private_runtime(tmp_path)
    proc.terminate()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-3000:]
    assert "Traceback" not in err and "Aborted" not in err, err[-3000:]
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{p}").exists() for p in under):
        assert time.monotonic() < deadline, f"Ray processes left 30 s after the command: {under}"
        time.sleep(0.5)


def test_a_killed_command_leaves_no_ray_process_behind(tmp_path: Path) -> None:
    """A SIGKILLed driver's private runtime lingered for 40 s and more; its watcher ends it at once."""
    proc, under = evaluation_on_a_private_runtime(tmp_path)
    # the mark the watcher also looks for reached the runtime (a process it starts later inherits it)
    carrying, now = marked(f"{MARK}={proc.pid}"), processes()
    assert any("raylet/raylet" in now[p][1] for p in carrying & set(now)), {p: now[p][1][:60] for p in under}
    proc.kill()
    proc.wait(timeout=30)
    deadline = time.monotonic() + 20  # "at once" on a loaded 2-core machine: it polls every 0.5 s
    while left := [
        p for p in under | carrying if Path(f"/proc/{p}").exists() and "zombie" not in state_of(p)
    ]:
        assert time.monotonic() < deadline, f"Ray processes left 20 s after the command was killed: {left}"
        time.sleep(0.5)


def state_of(pid: int) -> str:
    try:
        return {"Z": "zombie"}.get(
            Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0], "alive"
        )
    except OSError:
        return "gone"


def test_the_watcher_still_ends_a_killed_drivers_processes_while_the_driver_is_a_zombie() -> None:
    """A killed driver stays a zombie until its parent waits for it; a note of its children taken then is
    empty (they are init's already), and the watcher used to keep that note and spare the runtime."""
    driver = subprocess.Popen(["sh", "-c", "sleep 300 & wait"], start_new_session=True)
    deadline = time.monotonic() + 30
    while not (child := below(processes(), {driver.pid}) - {driver.pid}):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    reaper = Path(__file__).resolve().parents[1] / "training" / "common" / "ray_reaper.py"
    watcher = subprocess.Popen(
        [sys.executable, str(reaper), str(driver.pid), "no-such-ray-session"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert watcher.stdout is not None and watcher.stdout.readline().strip() == "watching"
    driver.kill()
    time.sleep(2)  # a zombie for four of the watcher's polls
    driver.wait()
    watcher.wait(timeout=30)
    deadline = time.monotonic() + 10
    while left := [p for p in child if Path(f"/proc/{p}").exists() and state_of(p) != "zombie"]:
        assert time.monotonic() < deadline, f"the killed driver's child {left} was spared"
        time.sleep(0.2)
