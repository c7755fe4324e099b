"""The network benchmark (training/speed/network.py) times each kernel of each network it is given."""

from __future__ import annotations

import json

import numpy as np
import pytest

from training.common.cli import CliError
from training.speed import network as speed_network


def test_network_benchmark_reports_both_kernels_per_network(tmp_path) -> None:
    out = tmp_path / "net.json"
    results = speed_network.main(["--models", "az_2p", "--calls", "2", "--repeats", "2", "--json", str(out)])
    assert set(results) == {"az_2p"} and set(results["az_2p"]) == {"forward_us", "values_us"}
    assert all(v > 0 for v in results["az_2p"].values())
    assert json.loads(out.read_text()) == results


def test_an_unknown_network_is_named() -> None:
    with pytest.raises(CliError, match="'nope' is not a shipped network"):
        speed_network.main(["--models", "nope", "--calls", "1", "--repeats", "1"])


def test_torch_adds_the_time_of_the_forward_pass_in_torch() -> None:
    results = speed_network.main(
        ["--models", "az_2p", "--batch", "4", "--calls", "2", "--repeats", "1", "--torch"]
    )
    assert set(results["az_2p"]) == {"forward_us", "values_us", "torch_forward_us"}
    assert results["az_2p"]["torch_forward_us"] > 0


@pytest.mark.parametrize("precision", ["bfloat16", "int8"])
def test_torch_precision_times_the_forward_pass_in_lower_precision(precision: str) -> None:
    results = speed_network.main(
        ["--models", "az_2p", "--batch", "4", "--calls", "2", "--repeats", "1", "--torch",
         "--torch-precision", precision]
    )  # fmt: skip
    assert results["az_2p"]["torch_forward_us"] > 0


def test_an_unknown_precision_is_named() -> None:
    with pytest.raises(CliError, match="'float8' is not one of float32, bfloat16, int8"):
        speed_network.torch_forward_us(None, np.zeros((1, 1), np.float32), 1, 1, 1, "float8")


def test_a_precision_without_torch_is_refused(capsys) -> None:
    with pytest.raises(SystemExit):
        speed_network.main(["--models", "az_2p", "--torch-precision", "int8"])
    assert "--torch-precision times the torch forward pass: add --torch" in capsys.readouterr().err
