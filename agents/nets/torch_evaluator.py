"""The network in torch for :class:`agents.search.driver.Search`: the leaves of many trees in one
call, on a GPU when there is one.

Why apart from the search: the search is numba over numpy arrays and runs without torch's
evaluation; this is the one place the batched search meets torch (devices, pinned buffers, CUDA
graphs).
"""

from __future__ import annotations

import warnings
from typing import Any


class TorchEvaluator:
    """The network in torch (a GPU when one is there), for :class:`agents.search.driver.Search`: the leaves of a lane
    of trees in one call.

    Why: on a GPU a call of a thousand leaves costs about what a call of eight does on the CPU.
    It runs the MaskablePPO policy's own modules, so its outputs match :func:`agents.nets.numba_net.net_forward`
    to float32 rounding, not bit for bit: a search evaluated here is close to the numba one, not equal.
    Each :meth:`lane` has its own (pinned) buffers, so one lane's leaves are evaluated on the GPU
    while the CPU selects the next lane's. On a GPU each lane's forward pass is a captured CUDA graph
    over all its rows (``graphs=True``): one launch instead of about forty.
    """

    def __init__(self, policy: Any, device: str = "auto", graphs: bool = True) -> None:
        import torch as th

        if device == "auto":
            device = "cuda" if th.cuda.is_available() else "cpu"
        self.th = th
        self.device = th.device(device)
        self.policy = policy.to(self.device).eval()
        self.graphs = graphs and self.device.type == "cuda"

    def lane(self, rows: int, other_rows: int, obs_dim: int, num_actions: int) -> TorchLane:
        """Buffers for up to ``rows`` leaves (and ``other_rows`` other seats' views of them)."""
        return TorchLane(self, rows, other_rows, obs_dim, num_actions)

    def forward(self, x: Any, rows: int) -> tuple[Any, Any]:
        """Actor logits of ``x[:rows]`` and critic values of every row of ``x``."""
        pol = self.policy
        f = pol.pi_features_extractor(x)
        fv = f if pol.vf_features_extractor is pol.pi_features_extractor else pol.vf_features_extractor(x)
        logits = pol.action_net(pol.mlp_extractor.forward_actor(f[:rows]))
        return logits, pol.value_net(pol.mlp_extractor.forward_critic(fv))[:, 0]


class TorchLane:
    """One lane of a :class:`TorchEvaluator`: host arrays the numba selection writes (``obs``,
    ``other_obs``) and the network's outputs are read back into (``logits``; ``values``: the
    on-move rows, ``other_values``: the other seats' rows), with :meth:`submit` (asynchronous on
    a GPU) and :meth:`wait`."""

    def __init__(
        self, ev: TorchEvaluator, rows: int, other_rows: int, obs_dim: int, num_actions: int
    ) -> None:
        th = ev.th
        self.ev, self.rows = ev, rows
        pin = ev.device.type == "cuda"
        total = rows + other_rows
        self.host_in = th.zeros((total, obs_dim), dtype=th.float32, pin_memory=pin)
        self.host_logits = th.zeros((rows, num_actions), dtype=th.float32, pin_memory=pin)
        self.host_values = th.zeros(total, dtype=th.float32, pin_memory=pin)
        self.dev_in = th.zeros((total, obs_dim), dtype=th.float32, device=ev.device)
        arr = self.host_in.numpy()
        self.obs, self.other_obs = arr[:rows], arr[rows:]
        vals = self.host_values.numpy()
        self.logits, self.values, self.other_values = self.host_logits.numpy(), vals[:rows], vals[rows:]
        self.event = th.cuda.Event() if pin else None
        self.graph = None
        if ev.graphs:
            try:
                self.graph, (self.dev_logits, self.dev_values) = self._capture()
            except RuntimeError as e:  # a policy a graph cannot hold: launch its kernels one by one
                warnings.warn(f"TorchEvaluator: no CUDA graph ({e}); evaluating eagerly", stacklevel=2)
                self.graph = None

    def _capture(self) -> tuple[Any, tuple[Any, Any]]:
        """A CUDA graph of the forward pass over all of ``dev_in`` (the unused rows are computed and ignored)."""
        th, ev = self.ev.th, self.ev
        with th.inference_mode():
            side = th.cuda.Stream()
            side.wait_stream(th.cuda.current_stream())
            with th.cuda.stream(side):
                for _ in range(2):
                    ev.forward(self.dev_in, self.rows)
            th.cuda.current_stream().wait_stream(side)
            graph = th.cuda.CUDAGraph()
            with th.cuda.graph(graph):
                out = ev.forward(self.dev_in, self.rows)
        return graph, out

    def submit(self, n_eval: int, n_other: int) -> None:
        """Evaluate the first ``n_eval`` rows of ``obs`` (actor and critic) and ``n_other`` of
        ``other_obs`` (critic); the outputs are in ``logits``/``values``/``other_values`` after :meth:`wait`."""
        th, rows = self.ev.th, self.rows
        self.dev_in[:n_eval].copy_(self.host_in[:n_eval], non_blocking=True)
        self.dev_in[rows : rows + n_other].copy_(self.host_in[rows : rows + n_other], non_blocking=True)
        if self.graph is not None:
            self.graph.replay()
            logits, values = self.dev_logits, self.dev_values
        else:
            with th.inference_mode():
                logits, values = self.ev.forward(self.dev_in, rows)
        self.host_logits[:n_eval].copy_(logits[:n_eval], non_blocking=True)
        self.host_values[:rows].copy_(values[:rows], non_blocking=True)
        self.host_values[rows : rows + n_other].copy_(values[rows : rows + n_other], non_blocking=True)
        if self.event is not None:
            self.event.record()

    def wait(self) -> None:
        """Until the last :meth:`submit`'s outputs are in the host arrays."""
        if self.event is not None:
            self.event.synchronize()


__all__ = ["TorchEvaluator", "TorchLane"]
