"""Engine versions side by side in one process: a game's share of the base game's speed in each.

Usage::

    python -m training.speed.ab HEAD~1 HEAD --game orient        # two commits of this repository
    python -m training.speed.ab ../other-checkout . --game strongholds --rounds 40

Why: on a shared machine two benchmark processes never see the same machine (speed drifts by
tens of percent within seconds), so a change worth a few points cannot be told from noise by
running the benchmark before and after it. Here every engine (a git revision's ``splendor_env``
or a directory holding one) is copied under its own package name and runs in this one process.
Each round times, for each engine in turn (the order alternates), the base game, the chosen
game and the base game again, from process CPU time; the game's share is its speed against the
mean of its two base-game neighbours, and the median over rounds is printed with its quartiles,
as ``python -m training.speed.env --module-rounds`` does for one engine. Two copies of the same
engine agree to about half a point over 80 rounds at B=1024.

Every engine is compiled afresh by numba (about a minute each) in a temporary directory.
"""

from __future__ import annotations

import argparse
import importlib
import io
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from training.common.cli import CliError, run_cli
from training.speed.env import bench_games, cpu_timer, quartiles, sandwiched

PACKAGE = "splendor_env"


def copy_engine(spec: str, dest: Path, repo: Path) -> None:
    """Put version ``spec`` of the engine package at ``dest``: the ``splendor_env`` of a directory
    if ``spec`` names one that holds it, else of git revision ``spec`` of ``repo``."""
    source = Path(spec) / PACKAGE
    if source.is_dir():
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__"))
        return
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", spec, PACKAGE], capture_output=True
    )
    if archive.returncode != 0:
        raise CliError(
            f"{spec!r} is neither a directory holding {PACKAGE}/ nor a git revision of {repo} "
            f"({archive.stderr.decode(errors='replace').strip()})"
        )
    unpacked = dest.parent / f"{dest.name}_tar"
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(unpacked, filter="data")
        else:  # Python before 3.10.12 / 3.11.4 has no filters; this is git's own archive of the repo
            tar.extractall(unpacked)  # noqa: S202
    (unpacked / PACKAGE).rename(dest)
    unpacked.rmdir()


def load_engines(specs: list[str], workdir: Path, repo: Path) -> dict[str, Any]:
    """Each engine's ``vector`` module, imported from its copy under a package name of its own
    (the package's imports are all relative), keyed by its label ``"k: spec"``. ``workdir`` must be
    on ``sys.path`` and its name an identifier."""
    engines: dict[str, Any] = {}
    for k, spec in enumerate(specs):
        name = f"{workdir.name}_{k}"  # unique per call: a second call in one process imports afresh
        copy_engine(spec, workdir / name, repo)
        engines[f"{k}: {spec}"] = importlib.import_module(f"{name}.vector")
    return engines


def compare(
    engines: dict[str, Any], game: str, rounds: int, batch: int, steps: int
) -> dict[str, dict[str, float]]:
    """The median share of ``game`` against the base game (and its quartiles) for each engine."""
    timers = {
        label: (cpu_timer(vector, batch, (), steps), cpu_timer(vector, batch, bench_games()[game], steps))
        for label, vector in engines.items()
    }
    shares: dict[str, list[float]] = {label: [] for label in engines}
    times: dict[str, list[float]] = {label: [] for label in engines}
    order = list(engines)
    for r in range(rounds):
        for label in order if r % 2 == 0 else order[::-1]:
            share, t, _ = sandwiched(*timers[label])
            shares[label].append(share)
            times[label].append(t)
    results = {}
    for label in engines:
        q1, median, q3 = quartiles(shares[label])
        results[label] = {
            "share_median": median,
            "share_q1": q1,
            "share_q3": q3,
            "best_ns": min(times[label]) * 1e9,
        }
    return results


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("engines", nargs="+", help="git revisions, or directories holding splendor_env/")
    parser.add_argument("--game", default="orient", choices=sorted(bench_games()), help="the game to compare")
    parser.add_argument("--rounds", type=int, default=80, help="rounds (each times every engine once)")
    parser.add_argument("--batch", type=int, default=1024, help="games per batch")
    parser.add_argument("--steps", type=int, default=10, help="batched steps per timed run")
    parser.add_argument("--repo", default=".", help="the git repository the revisions are read from")
    args = parser.parse_args(argv)
    for flag in ("rounds", "batch", "steps"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag} must be at least 1, got {getattr(args, flag)}")
    with tempfile.TemporaryDirectory(prefix="bench_ab_") as workdir:
        sys.path.insert(0, workdir)
        try:
            engines = load_engines(args.engines, Path(workdir), Path(args.repo))
            results = compare(engines, args.game, args.rounds, args.batch, args.steps)
        finally:
            sys.path.remove(workdir)
    print(f"{args.game} against the base game, B={args.batch}, {args.rounds} rounds:")
    for label, r in results.items():
        print(
            f"  {label:<30} median share {r['share_median']:.1%} [quartiles {r['share_q1']:.1%}, "
            f"{r['share_q3']:.1%}], best run {r['best_ns']:.0f} ns per step"
        )
    return results


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.speed.ab"))
