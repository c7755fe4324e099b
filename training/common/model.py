"""Building a MaskablePPO network from a config's network section: one place for PPO and expert iteration."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

#: The config's ``network.activation`` names -> torch modules.
ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "elu": torch.nn.ELU, "gelu": torch.nn.GELU}


def linear_schedule(start: float, end: float) -> Callable[[float], float]:
    """SB3 schedule: ``progress_remaining`` goes 1 -> 0 over the run."""

    def schedule(progress_remaining: float) -> float:
        return end + (start - end) * progress_remaining

    return schedule


def policy_kwargs(
    net_arch: list[int], activation: str, extractor: Any = None, **extractor_kwargs: Any
) -> dict:
    """SB3 ``policy_kwargs``: the same hidden sizes for actor and critic, and an optional features extractor."""
    kwargs: dict[str, Any] = {
        "net_arch": {"pi": list(net_arch), "vf": list(net_arch)},
        "activation_fn": ACTIVATIONS[activation],
    }
    if extractor is not None:
        kwargs["features_extractor_class"] = extractor
        kwargs["features_extractor_kwargs"] = extractor_kwargs
    return kwargs
