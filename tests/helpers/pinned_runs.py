"""Seeded runs of the five commands a user knows, reduced to digests of what they write.

Why: a restructuring of ``agents/`` and ``training/`` must not change a single
game, table or weight. Each run here goes through ``python -m <command>`` in a
subprocess, exactly as a user types it, and hashes its deterministic output
(timings and paths dropped). ``tests/test_pinned_outputs.py`` compares the
digests with the ones recorded before the restructuring;
``python -m tests.helpers.pinned_runs`` prints them.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

#: Keys whose values are wall-clock times, speeds or machine paths: left out of every digest.
VOLATILE = (
    "seconds",
    "time",
    "per_s",
    "wall",
    "minutes",
    "output_dir",
    "path",
    "elapsed",
    "date",
    "host",
    "python",
    "torch",
    "ray",
    "files",
)


def _volatile(key: str) -> bool:
    return any(part in key.lower() for part in VOLATILE)


def scrub(value: Any) -> Any:
    """``value`` with every timing or path key dropped, at any depth."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if not _volatile(str(k))}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()[:16]


def json_bytes(value: Any) -> bytes:
    return json.dumps(scrub(value), sort_keys=True).encode()


def command(module: str, *args: str, cwd: Path) -> str:
    """stdout of ``python -m module args`` (one torch thread), failing loudly with its stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"python -m {module} {' '.join(args)} failed:\n{done.stderr[-3000:]}"
    return done.stdout


def weights_bytes(path: Path) -> bytes:
    """The policy tensors inside an SB3 ``.zip``, in name order (the zip's own bytes hold timestamps)."""
    import torch

    with zipfile.ZipFile(path) as z:
        state = torch.load(io.BytesIO(z.read("policy.pth")), map_location="cpu", weights_only=True)
    return b"".join(name.encode() + state[name].numpy().tobytes() for name in sorted(state))


def npz_bytes(path: Path) -> bytes:
    with np.load(path) as arrays:
        return b"".join(name.encode() + arrays[name].tobytes() for name in sorted(arrays.files))


def run_play(tmp: Path) -> str:
    records = tmp / "play.jsonl"
    out = command(
        "training.play",
        "--agents",
        "ppo:ppo_2p",
        "az:az_2p,sims=40",
        "--games",
        "2",
        "--seed",
        "5",
        "--save-games",
        str(records),
        cwd=tmp,
    )
    modules = command(
        "training.play",
        "--agents",
        "mcts:sims=20",
        "az:az_modules_2p,sims=20",
        "--modules",
        "cities",
        "trading_posts",
        "orient",
        "strongholds",
        "--seed",
        "9",
        "--render",
        "every",
        cwd=tmp,
    )
    return digest(out.encode(), records.read_bytes(), modules.encode())


def run_evaluate(tmp: Path) -> str:
    result = tmp / "eval.json"
    out = command(
        "training.evaluate",
        "az:sims=30",
        "--opponents",
        "greedy",
        "ppo:ppo_2p",
        "--games",
        "4",
        "--players",
        "2",
        "3",
        "--workers",
        "2",
        "--seed",
        "7",
        "--json",
        str(result),
        cwd=tmp,
    )
    lines = [line for line in out.splitlines() if not line.strip().startswith("(")]  # "(22.1 s)"
    return digest("\n".join(lines).encode(), json_bytes(json.loads(result.read_text())))


def run_tournament(tmp: Path) -> str:
    out = tmp / "tournament"
    command(
        "training.tournament",
        "--agents",
        "greedy",
        "lookahead",
        "mcts:sims=20",
        "random",
        "--players",
        "2",
        "3",
        "--games",
        "4",
        "--workers",
        "2",
        "--seed",
        "3",
        "--out",
        str(out),
        "--save-games",
        "--no-progress",
        cwd=tmp,
    )
    parts = [json_bytes(json.loads((out / "summary.json").read_text()))]
    for table in ("2p_base", "3p_base"):
        parts.append(json_bytes(json.loads((out / table / "summary.json").read_text())))
        for name in ("winrates.csv", "ratings.csv", "games.jsonl"):
            parts.append((out / table / name).read_bytes())
    return digest(*parts)


TRAIN_CONFIG = {
    "n_envs": 8,
    "total_timesteps": 1024,
    "checkpoint_every": 512,
    "torch_threads": 1,
    "seed": 11,
    "network": {"net_arch": [16], "card_features": True},
    "ppo": {"n_steps": 32, "batch_size": 128, "n_epochs": 1},
    "opponents": {
        "pool": [
            {"spec": "random"},
            {"spec": "greedy", "weight": 0.5},
            {"spec": "snapshots", "final_weight": 2},
        ],
        "snapshot_every": 512,
    },
    "eval": {"every": 512, "games": 6, "opponents": ["random", "greedy"]},
    "pretrain": {"teacher": "greedy", "samples": 3000, "epochs": 1, "batch_size": 512},
}


def run_train(tmp: Path) -> str:
    run = tmp / "ppo"
    config = tmp / "train.json"  # YAML is a superset of JSON
    config.write_text(json.dumps({**TRAIN_CONFIG, "output_dir": str(run)}))
    command("training.train", "--config", str(config), "--no-progress", cwd=tmp)
    summary = json.loads((run / "summary.json").read_text())
    return digest(weights_bytes(run / "final.zip"), json_bytes(summary))


SEARCH_CONFIG = {
    "players": 2,
    "init": "fresh",
    "iterations": 2,
    "seed": 4,
    "selfplay": {"games": 4, "sims": 8, "games_per_job": 2, "max_turns": 60},
    "buffer": {"capacity": 4000},
    "train": {"batch_size": 32, "epochs": 1, "min_positions": 10},
    "gate": {"games": 2, "sims": 8},
    "eval": {"every": 1, "games": 2, "sims": 8, "opponents": ["greedy"], "modes": ["ppo"]},
}


def run_search_train(tmp: Path) -> str:
    run = tmp / "search"
    config = tmp / "search.json"
    config.write_text(json.dumps({**SEARCH_CONFIG, "output_dir": str(run)}))
    command("training.search_train", "--config", str(config), "--workers", "2", "--no-progress", cwd=tmp)
    metrics = json.loads((run / "metrics.json").read_text())
    return digest(
        weights_bytes(run / "checkpoints" / "learner.zip"),
        weights_bytes(run / "best.zip"),
        npz_bytes(run / "checkpoints" / "buffer.npz"),
        json_bytes(metrics),
    )


RUNS: dict[str, Callable[[Path], str]] = {
    "play": run_play,
    "evaluate": run_evaluate,
    "tournament": run_tournament,
    "train": run_train,
    "search_train": run_search_train,
}


def main() -> None:
    for name, run in RUNS.items():
        with tempfile.TemporaryDirectory() as tmp:
            print(f'    "{name}": "{run(Path(tmp))}",', flush=True)


if __name__ == "__main__":
    main()
