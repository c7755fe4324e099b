"""The throughput benchmark runs end to end and reports every figure (values are not timed here)."""

from __future__ import annotations

import json

from training import bench_env


def test_benchmark_reports_every_figure(tmp_path) -> None:
    out = tmp_path / "bench.json"
    results = bench_env.main(["--seconds", "0.05", "--skip-compile", "--json", str(out)])
    for batch in bench_env.BATCH_SIZES:
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
