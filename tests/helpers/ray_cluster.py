"""A real two-node Ray cluster on this machine, for the ``--address`` tests: started and stopped by the test.

Why not ``ray stop``: it stops every Ray process on the machine (another test's local runtime, a
user's cluster). The cluster here has its own temporary folder and ports, and :meth:`LocalCluster.stop`
kills only the processes whose command line names them (and their children).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from training.common.ray_cluster import below, processes

RAY = str(Path(sys.executable).with_name("ray"))


def free_port(lo: int = 20000, hi: int = 30000) -> int:
    """A TCP port free on 127.0.0.1 now, outside Ray's default worker ports (10002-19999)."""
    for port in range(lo + os.getpid() % 5000, hi):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port")


def processes_naming(*marks: str, words: tuple[str, ...] = ()) -> set[int]:
    """The processes whose command line holds one of ``marks``, or every one of ``words`` as words of its
    own, with all their descendants."""
    procs = processes()
    return below(
        procs,
        {
            p
            for p, (_, cmd) in procs.items()
            if p != os.getpid()
            and (any(m in cmd for m in marks) or (words and set(words) <= set(cmd.split())))
        },
    )


class LocalCluster:
    """A Ray head (``head_cpus`` CPUs) and worker nodes (one CPU each) on 127.0.0.1, with token authentication
    as ``ray start`` sets it."""

    def __init__(self, head_cpus: int = 1) -> None:
        self.temp_dir = tempfile.mkdtemp(
            prefix="rc", dir="/tmp"
        )  # short: Ray's socket paths must fit 107 bytes
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_USAGE_STATS_ENABLED": "0"}
        self.nodes = 0
        self.head_cpus = head_cpus  # 0: every task and actor runs on a joined node
        self.client_port = free_port(self.port + 1)

    def _ray_start(self, *args: str) -> None:
        done = subprocess.run(
            [RAY, "start", *args], env=self.env, capture_output=True, text=True, timeout=180
        )
        if done.returncode != 0:
            raise RuntimeError(f"ray start {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")

    def start(self) -> LocalCluster:
        self._ray_start(
            "--head",
            "--port", str(self.port),
            "--node-ip-address", "127.0.0.1",
            "--temp-dir", self.temp_dir,
            "--num-cpus", str(self.head_cpus),
            "--include-dashboard", "false",
            "--ray-client-server-port", str(self.client_port),
            "--disable-usage-stats",
        )  # fmt: skip
        return self

    def add_node(self) -> None:
        """A second (third, ...) node joining the head: the raylet :meth:`kill_node` kills."""
        self._ray_start("--address", self.address, "--node-ip-address", "127.0.0.1", "--num-cpus", "1")
        self.nodes += 1

    def raylets(self) -> list[int]:
        """The raylet pids of this cluster, the head's first (its socket is ``raylet``, a joined node's ``raylet.N``)."""
        procs = processes()
        mine = [
            (cmd.split("--raylet_socket_name=")[1].split()[0], p)
            for p, (_, cmd) in procs.items()
            if "/raylet " in cmd + " " and self.temp_dir in cmd and "--raylet_socket_name=" in cmd
        ]
        return [p for _, p in sorted(mine)]

    def running_on_last_node(self, task: str = "run_attempt") -> list[int]:
        """The worker processes of the last joined node running ``task`` now. Ray names such a process
        ``ray::TASK`` (a function), ``ray::CLASS.METHOD`` (an actor's method) or ``ray::CLASS`` (an idle
        actor): ``task`` ``CLASS`` finds that actor whatever it does."""
        raylets = self.raylets()
        if len(raylets) < 2:
            return []
        procs = processes()
        names = (f"ray::{task}", f"ray::{task}.")
        return [
            p
            for p in below(procs, {raylets[-1]})
            if (title := procs[p][1].split(" ", 1)[0]) == names[0]
            or ("." not in task and title.startswith(names[1]))
        ]

    def kill_node(self) -> int:
        """SIGKILL the last joined node's raylet (its workers die with it); its pid."""
        raylets = self.raylets()
        if len(raylets) < 2:
            raise RuntimeError("no joined node to kill")
        os.kill(raylets[-1], signal.SIGKILL)
        self.nodes -= 1
        return raylets[-1]

    def own_processes(self) -> set[int]:
        """This cluster's processes: those naming its folder or address, and its Ray Client proxy, which
        names neither (its ``--address`` is the machine's own IP, not ``127.0.0.1``): known by its module
        and port."""
        proxy = ("ray.util.client.server", f"--port={self.client_port}")
        return processes_naming(self.temp_dir, self.address, words=proxy)

    def stop(self) -> None:
        """Kill this cluster's processes only (never ``ray stop``), then remove its folder."""
        for _ in range(3):
            pids = self.own_processes()
            if not pids:
                break
            for p in pids:
                with contextlib.suppress(OSError):
                    os.kill(p, signal.SIGKILL)
            time.sleep(0.5)
        shutil.rmtree(self.temp_dir, ignore_errors=True)
