"""``.ci/gpu``, the GPU checks as one command for a lent machine, runs end to end on the CPU.

Why: the script runs only where CI never does (a GPU machine without network), so a rename of a
benchmark option or a test would break it unseen until the next lent machine's few minutes were
spent on the error. Its CPU dry run takes the same steps at a small size.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def test_the_gpu_checks_run_every_step_on_the_cpu(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "GPU_CHECK_DEVICE": "cpu",
        "GPU_CHECK_GAMES": "4",
        "GPU_CHECK_PER_GAME": "2",
        "GPU_CHECK_PYTHON": sys.executable,
        "OUT": str(tmp_path),
    }
    done = subprocess.run(
        ["bash", str(ROOT / ".ci" / "gpu")], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "gpu.log").read_text()
    assert log.count("== rc 0") == 4, log
    assert "rc 1" not in log and "rc 124" not in log
    assert log.count("batched / per-game: x") == 2, log  # the two benchmarks printed their ratio
    assert "subtrees kept" in log
    assert "batched with kept subtrees / per-game without: x" in log  # the figure, computed
    assert "no CUDA GPU" in log  # the CUDA tests were collected (and skip here)
