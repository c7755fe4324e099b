"""The commands a user knows give the same games, tables and weights as before the layout changed.

Why: ``agents/`` and ``training/`` were reorganised (issue: the layout shows the
architecture) with behaviour unchanged. Each digest below was recorded on the
code before that step, by ``python -m tests.helpers.pinned_runs``; a change
of behaviour (a rule, an agent, a training default) changes one, and its new
digest goes in with the commit that says why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.pinned_runs import RUNS

pytestmark = pytest.mark.slow
pytest.importorskip("sb3_contrib")

#: Every digest a command's output has had on the hosts the suite runs on: the code must give one of
#: them. Why more than one: torch's and numba's float arithmetic takes the host's widest vector
#: instructions, so an AVX-512 host rounds a network's outputs (and from there a training run's
#: weights and a search's games) a little differently than an AVX2 one; ``play`` and ``evaluate``
#: give the same on both. A change of behaviour changes the digest on every host.
DIGESTS: dict[str, tuple[str, ...]] = {
    "play": ("5b4a84c4db67dab1",),
    "evaluate": ("e9c4e20078bb00c8",),  # az_2p_v5, az's 2-player default (0.6.0)
    # first column: re-recorded 2026-11-28 on the AMD EPYC (AVX2) host, where 9bac9cf, whose CI had passed
    # with the earlier digests, gave these on a fresh install of the same pinned torch. Second: an Intel Xeon
    # (AVX-512) host on 2026-11-28, where e07802b (whose CI passed on the first host) gives them too
    "tournament": ("c35bd7f490abc497", "0fc0f58943174c13"),
    # third column: an AMD EPYC with AVX-512 on 2026-12-02, where 89ca3b7 (the commit before the one search
    # driver) gives these too
    "train": ("76a34f3226d703fa", "1f7fe1fbab93bc3c", "31da2170bdf59869"),
    "search_train": ("8102c63e28d869ca", "6a11894fc1c84580", "91b655ea6dae6878"),
}


def environment() -> str:
    """What a digest depends on besides the code: printed when one differs, to tell the two apart."""
    import importlib.metadata as md
    import platform

    names = (
        "numpy",
        "numba",
        "llvmlite",
        "torch",
        "stable-baselines3",
        "sb3-contrib",
        "openskill",
        "gymnasium",
    )
    versions = []
    for name in names:
        try:
            versions.append(f"{name} {md.version(name)}")
        except md.PackageNotFoundError:
            versions.append(f"{name} missing")
    return f"python {platform.python_version()}, {platform.machine()} ({_cpu()}), " + ", ".join(versions)


def _cpu() -> str:
    """The host's processor and whether it has AVX-512 (a digest's rounding depends on it)."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "cpu unknown"
    model = next(
        (ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("model name")), "?"
    )
    return f"{model}, {'with' if ' avx512f' in info else 'without'} AVX-512"


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_command_output_unchanged(name: str, tmp_path: Path) -> None:
    digest = RUNS[name](tmp_path)
    assert digest in DIGESTS[name], (
        f"{name}'s output changed (digest {digest}); if the code did not, the environment did ({environment()})"
    )


def test_every_pinned_command_has_a_digest() -> None:
    assert sorted(RUNS) == sorted(DIGESTS)
