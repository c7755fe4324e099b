"""The throughput benchmark runs end to end and reports every figure (values are not timed here)."""

from __future__ import annotations

import json

from training.speed import env as speed_env


def test_benchmark_reports_every_figure(tmp_path) -> None:
    out = tmp_path / "bench.json"
    results = speed_env.main(["--seconds", "0.05", "--skip-compile", "--json", str(out)])
    for batch in speed_env.BATCH_SIZES:
        assert results[f"batched_B{batch}"] > 0
    for key in (
        "batched_B1024_all_modules",
        "aec_wrapped",
        "aec_raw",
        "connect_four_v3_wrapped",
        "memory_mb_per_1000_games",
    ):
        assert results[key] > 0
    assert (
        results["ratio_wrapped_vs_connect_four"]
        == results["aec_wrapped"] / results["connect_four_v3_wrapped"]
    )
    assert json.loads(out.read_text()) == results


def test_cpu_time_module_ratios_cover_every_module() -> None:
    results = speed_env.bench_modules_cpu(rounds=3, steps=2, batch=8)
    for name in ("base", *speed_env.MODULE_CONFIGS):
        assert results[f"cpu_ns_per_step_{name}"] > 0
        q1, median, q3 = (results[f"cpu_share_{k}_{name}"] for k in ("q1", "median", "q3"))
        assert 0 < q1 <= median <= q3
    assert results["cpu_ratio_base_vs_base"] == 1.0


def test_each_share_is_taken_against_the_base_runs_around_it(monkeypatch) -> None:
    """A module run's share uses the two base runs timed just before and after it, so a host
    that slows down between rounds leaves the median share where it is."""
    costs = {"base": 1.0, "cities": 2.0}
    slowdown = [1.0]
    now = [0.0]
    monkeypatch.setattr(speed_env, "MODULE_CONFIGS", {"cities": ("cities",)})

    from splendor_env import vector

    real_step = vector.SplendorBatch.step

    def step(self, actions, env_ids=None):
        now[0] += costs["cities" if self.modules else "base"] * slowdown[0]
        return real_step(self, actions, env_ids)

    def process_time() -> float:
        slowdown[0] *= 1.01  # the host gets slower all the time
        return now[0]

    monkeypatch.setattr(vector.SplendorBatch, "step", step)
    monkeypatch.setattr(speed_env.time, "process_time", process_time)
    results = speed_env.bench_modules_cpu(rounds=5, steps=1, batch=2)
    assert abs(results["cpu_share_median_cities"] - 0.5) < 0.02
    assert results["cpu_ratio_cities_vs_base"] < 0.48  # best of each: biased by the drift


def test_module_rounds_cli_reports_only_the_module_shares(tmp_path) -> None:
    out = tmp_path / "shares.json"
    results = speed_env.main(["--module-rounds", "1", "--json", str(out)])
    assert set(results) == {
        f"cpu_{kind}_{name}{suffix}"
        for name in ("base", *speed_env.MODULE_CONFIGS)
        for kind, suffix in (("ns_per_step", ""), ("ratio", "_vs_base"))
    } | {
        f"cpu_share_{k}_{name}"
        for name in ("base", *speed_env.MODULE_CONFIGS)
        for k in ("q1", "median", "q3")
    }
    assert json.loads(out.read_text()) == results


def test_module_rounds_below_one_is_a_clear_error(capsys) -> None:
    import pytest

    with pytest.raises(SystemExit):
        speed_env.main(["--module-rounds", "0"])
    assert "--module-rounds must be at least 1, got 0" in capsys.readouterr().err


def test_module_batch_sets_the_games_per_batch(monkeypatch) -> None:
    seen = {}
    monkeypatch.setattr(speed_env, "bench_modules_cpu", lambda **kw: seen.update(kw) or {})
    speed_env.main(["--module-rounds", "2", "--module-batch", "32"])
    assert seen == {"rounds": 2, "batch": 32}


def test_module_batch_below_one_is_a_clear_error(capsys) -> None:
    import pytest

    with pytest.raises(SystemExit):
        speed_env.main(["--module-rounds", "1", "--module-batch", "0"])
    assert "--module-batch must be at least 1, got 0" in capsys.readouterr().err


def test_the_cli_exits_zero_although_main_returns_its_figures() -> None:
    from training.common.cli import run_cli

    assert run_cli(lambda argv: {"figure": 1.0}, [], prog="bench") == 0
