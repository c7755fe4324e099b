"""The search's network in numba: microseconds per position of each shipped network's forward pass.

    python -m training.speed.network [--models az_2p az_3_4p az_modules_2p] [--batch 8] [--repeats 20]
        [--torch] [--torch-precision float32|bfloat16|int8] [--json FILE]

Why: about 70% of a search is this network (:mod:`agents.nets.numba_net`), called for ``batch`` leaves at a
time (``net_forward``: the seat on move's actor and critic) and for the other seats' views of
them (``net_values``: the critic alone). Its speed rests on LLVM vectorising a few loops, and a
change that looks harmless can stop that: a refactor once made ``net_values`` nine times slower
and self-play 2.2 times slower without a test failing. This prints each kernel's time per
position on base-game positions (module positions for a module network), the best of
``--repeats`` blocks, so that a change to the network's code can be checked before and after.
``--torch`` also times the same forward pass in torch on the CPU (one thread, the batched search's
:class:`agents.nets.torch_evaluator.TorchEvaluator`), which is what a larger ``--batch`` would have to
beat for a CPU to gain from evaluating many searches' leaves in one call; ``--torch-precision``
times it in lower precision (``bfloat16`` autocast, which a CPU with AMX runs in its matrix
units; ``int8`` dynamic quantisation of the linear layers), the other way a CPU might gain.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from training.common.cli import CliError, run_cli

DEFAULT_MODELS = ("az_2p", "az_3_4p", "az_modules_2p")


def best_us(call: Callable[[], None], calls: int, repeats: int) -> float:
    """The fastest of ``repeats`` blocks of ``calls`` calls, in microseconds a call (after one untimed call)."""
    call()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return min(times)


PRECISIONS = ("float32", "bfloat16", "int8")


def bench_model(
    name: str, batch: int, calls: int, repeats: int, torch: bool = False, precision: str = "float32"
) -> dict[str, float]:
    """``{"forward_us", "values_us"}`` per position of shipped network ``name`` on ``batch`` positions
    (and ``"torch_forward_us"`` with ``torch``, in ``precision``)."""
    from agents.nets.checkpoint import load_model
    from agents.nets.numba_net import NetBuffers, export_network, net_forward, net_values, num_actions_of
    from agents.nets.shipped import resolve_model, shipped_models
    from agents.positions import sample_states
    from splendor_env.observation import observe

    shipped = shipped_models()
    if name not in shipped:
        raise CliError(f"--models: {name!r} is not a shipped network (one of {sorted(shipped)})")
    game = shipped[name]["game"]
    players, modules = int(game["players"][0]), tuple(game["modules"])
    model = load_model(resolve_model(name))
    weights = export_network(model.policy)
    states = sample_states(players, 3, seed=1, modules=modules)
    obs = np.zeros((batch, weights[0].shape[0]), np.float32)
    for i in range(batch):
        s = states[(i * 7) % len(states)]
        observe(s, i % players, obs[i])
    buf = NetBuffers(weights, batch)

    def forward() -> None:
        net_forward(obs, batch, weights, buf.feats, buf.h1, buf.h2, buf.ctx, buf.logits, buf.values)

    def values() -> None:
        net_values(obs, batch, weights, buf.feats, buf.h1, buf.h2, buf.values)

    out = {
        "forward_us": best_us(forward, calls, repeats) / batch,
        "values_us": best_us(values, calls, repeats) / batch,
    }
    if torch:
        out["torch_forward_us"] = torch_forward_us(
            model.policy, obs, num_actions_of(weights), calls, repeats, precision
        )
    return out


def torch_forward_us(
    policy: object,
    obs: np.ndarray,
    num_actions: int,
    calls: int,
    repeats: int,
    precision: str = "float32",
) -> float:
    """Microseconds a position of the policy's actor and critic in torch on one CPU thread, over the
    rows of ``obs`` at once (the batched search's evaluator, as it runs there), in ``precision``
    (one of :data:`PRECISIONS`)."""
    import contextlib
    import copy
    import warnings

    import torch as th

    from agents.nets.torch_evaluator import TorchEvaluator

    if precision not in PRECISIONS:
        raise CliError(f"--torch-precision: {precision!r} is not one of {', '.join(PRECISIONS)}")
    if precision == "int8":
        with warnings.catch_warnings():  # torch.ao's quantisation API warns that it is deprecated
            warnings.simplefilter("ignore")
            policy = th.ao.quantization.quantize_dynamic(
                copy.deepcopy(policy), {th.nn.Linear}, dtype=th.qint8
            )
    threads = th.get_num_threads()
    th.set_num_threads(1)
    try:
        lane = TorchEvaluator(policy, device="cpu").lane(len(obs), 0, obs.shape[1], num_actions)
        lane.obs[:] = obs

        def forward() -> None:
            cast = (
                th.autocast("cpu", dtype=th.bfloat16) if precision == "bfloat16" else contextlib.nullcontext()
            )
            with cast:
                lane.submit(len(obs), 0)
            lane.wait()

        return best_us(forward, calls, repeats) / len(obs)
    finally:
        th.set_num_threads(threads)


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    ap = argparse.ArgumentParser(prog="python -m training.speed.network", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS), help="shipped network names")
    ap.add_argument("--batch", type=int, default=8, help="positions a call (the search's leaves a round)")
    ap.add_argument("--calls", type=int, default=200, help="calls a timed block")
    ap.add_argument("--repeats", type=int, default=20, help="timed blocks; the fastest is reported")
    ap.add_argument(
        "--torch", action="store_true", help="also time the forward pass in torch (CPU, one thread)"
    )
    ap.add_argument(
        "--torch-precision",
        choices=PRECISIONS,
        default="float32",
        help="the torch forward pass's precision: bfloat16 autocast or int8 dynamic quantisation",
    )
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args(argv)
    if args.batch < 1 or args.calls < 1 or args.repeats < 1:
        ap.error("--batch, --calls and --repeats must be at least 1")
    if args.torch_precision != "float32" and not args.torch:
        ap.error("--torch-precision times the torch forward pass: add --torch")
    results = {}
    for name in args.models:
        results[name] = bench_model(
            name, args.batch, args.calls, args.repeats, args.torch, args.torch_precision
        )
        r = results[name]
        line = f"{name:16s} net_forward {r['forward_us']:7.2f} us/position   net_values {r['values_us']:7.2f} us/position"
        if args.torch:
            line += f"   torch {args.torch_precision} forward {r['torch_forward_us']:7.2f} us/position"
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return results


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.speed.network"))
