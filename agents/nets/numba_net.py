"""The card-slot PPO network in numba: the evaluator that search agents call per leaf.

Why not torch: a torch call has a fixed cost of 50-100 us, more than the whole forward pass of
this small network on one position. :func:`export_network` turns a card-slot policy
(:class:`agents.nets.policy_net.CardSlotPolicy`, every shipped model's) into float32 arrays and
:func:`net_forward` evaluates a batch with the same arithmetic (:func:`check_export` compares it
with torch): about 15 us a base-game position on one core. The sizes are read from the exported
weights, so one code runs every game; :func:`seat_values` turns the critic's per-seat outputs
into the values the search backs up.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from agents.nets.card_slots import CARD_GAP_DIM, N_SLOTS
from splendor_env.actions import BUY_MARKET, BUY_RESERVED, RESERVE_MARKET
from splendor_env.observation import CARD_DIM, O_MARKET, O_SEATS, S_BONUS, S_RES, S_TOKENS, SEAT_DIM

# ---------------------------------------------------------------------------
# The network in numba


def flush_subnormals(a: np.ndarray) -> np.ndarray:
    """``a`` (float32, changed in place) with its subnormal values set to zero.

    Why: x86 CPUs multiply subnormal floats (below 1.2e-38) through a slow microcode path, and
    a trained network can hold thousands of them (weight decay drives weights whose gradient is
    always zero towards 0): 20,006 of 214,524 weights after 15 iterations of search training made
    every search 7.5x slower. Zero changes no output by more than about 1e-38.
    """
    a[np.abs(a) < np.finfo(np.float32).tiny] = 0.0
    return a


def export_network(policy: Any) -> tuple[np.ndarray, ...]:
    """The card-slot policy's weights as contiguous float32 arrays, in :func:`net_forward`'s order.

    The critic is either the plain trunk (second layer ``c2w``/``c2b``, no residual blocks: every
    model saved before 0.5.0) or the residual one (``c2w``/``c2b`` empty, the blocks stacked in
    arrays 21-24, ``[blocks, width, width]``/``[blocks, width]``); :func:`net_forward` runs both.
    The last two arrays repeat the critic's first layer (the critic's columns of ``w1t`` and ``b1``)
    as contiguous arrays of their own, for :func:`net_values`.
    """
    from agents.nets.policy_net import CardSlotExtractor, CardSlotHead, ResidualBlock

    ex = policy.mlp_extractor
    if not isinstance(ex, CardSlotExtractor) or not isinstance(policy.action_net, CardSlotHead):
        raise ValueError(
            "the az agent needs a card-slot policy (network.policy=card_slots, like the shipped ppo_2p)"
        )
    if not getattr(policy.pi_features_extractor, "card_features", False):
        raise ValueError("the az agent needs a policy whose ScaledObs has card_features=True")

    def arr(t: Any) -> np.ndarray:
        return flush_subnormals(np.array(t.detach().cpu().numpy(), dtype=np.float32, order="C"))

    a1, a2 = ex.actor[0], ex.actor[2]
    c1 = ex.critic[0]
    blocks = [m for m in ex.critic if isinstance(m, ResidualBlock)]
    width = c1.weight.shape[0]
    if blocks:
        c2w, c2b = np.zeros((0, width), np.float32), np.zeros(0, np.float32)
        rw1 = np.ascontiguousarray(np.stack([arr(b.inner[0].weight) for b in blocks]))
        rb1 = np.ascontiguousarray(np.stack([arr(b.inner[0].bias) for b in blocks]))
        rw2 = np.ascontiguousarray(np.stack([arr(b.inner[2].weight) for b in blocks]))
        rb2 = np.ascontiguousarray(np.stack([arr(b.inner[2].bias) for b in blocks]))
    else:
        c2w, c2b = arr(ex.critic[2].weight), arr(ex.critic[2].bias)
        rw1 = rw2 = np.zeros((0, width, width), np.float32)
        rb1 = rb2 = np.zeros((0, width), np.float32)
    k1, k2 = ex.card[0], ex.card[2]
    head = policy.action_net
    # the first layers of actor and critic read the same features: one [in, 2 * hidden] matrix,
    # transposed so that each (often zero) input feature adds one contiguous row
    w1t = np.ascontiguousarray(np.concatenate([arr(a1.weight), arr(c1.weight)], axis=0).T)
    b1 = np.concatenate([arr(a1.bias), arr(c1.bias)])
    actor = a1.weight.shape[0]  # the critic's first layer is w1t[:, actor:], also exported on its own
    return (
        arr(policy.pi_features_extractor.inv_scale),
        w1t, b1, arr(a2.weight), arr(a2.bias), c2w, c2b,
        arr(k1.weight), arr(k1.bias), arr(k2.weight), arr(k2.bias),
        arr(ex.context.weight), arr(ex.context.bias),
        arr(head.base.weight), arr(head.base.bias), arr(head.slot.weight), arr(head.slot.bias),
        arr(policy.value_net.weight), arr(policy.value_net.bias),
        np.ascontiguousarray(arr(k1.weight).T), np.ascontiguousarray(arr(k2.weight).T),
        rw1, rb1, rw2, rb2,
        np.ascontiguousarray(w1t[:, actor:]), np.ascontiguousarray(b1[actor:]),
    )  # fmt: skip


@njit(cache=True, fastmath=True)
def _dense_batch(w: np.ndarray, b: np.ndarray, x: np.ndarray, out: np.ndarray, n: int, relu: bool) -> None:
    """``out[i] = w @ x[i] + b`` for the first ``n`` rows: each weight row is read once for all rows."""
    n_out, n_in = w.shape
    for j in range(n_out):
        for i in range(n):
            acc = np.float32(0.0)
            for k in range(n_in):
                acc += w[j, k] * x[i, k]
            acc += b[j]
            out[i, j] = acc if (not relu or acc > 0) else np.float32(0.0)


@njit(cache=True)
def _features(obs: np.ndarray, inv_scale: np.ndarray, f: np.ndarray) -> None:
    """:class:`agents.nets.policy_net.ScaledObs` with card features: scaled observation, then the card gaps.

    The observation size is the network's own (``inv_scale``): 497 floats for a base-game
    network, the module observation for a module network; the card gaps follow it."""
    dim = inv_scale.shape[0]
    for k in range(dim):
        f[k] = obs[k] * inv_scale[k]
    for rel in range(2):
        so = O_SEATS + rel * SEAT_DIM
        for i in range(N_SLOTS):
            co = O_MARKET + i * CARD_DIM if i < 12 else so + S_RES + (i - 12) * CARD_DIM
            base = dim + rel * N_SLOTS * 4 + i * 4
            visible = obs[co] if rel == 0 else obs[co] * (1.0 - obs[co + 1])
            need_sum = 0.0
            short_sum = 0.0
            for c in range(5):
                need = obs[co + 11 + c] - obs[so + S_BONUS + c]
                need = need if need > 0 else 0.0
                short = need - obs[so + S_TOKENS + c]
                need_sum += need
                short_sum += short if short > 0 else 0.0
            missing = short_sum - obs[so + S_TOKENS + 5]
            missing = missing if missing > 0 else 0.0
            f[base] = need_sum / 10.0 * visible
            f[base + 1] = short_sum / 10.0 * visible
            f[base + 2] = missing / 10.0 * visible
            f[base + 3] = (1.0 if missing == 0 else 0.0) * visible


@njit(cache=True, inline="always")
def _critic_plain(h1, h2, i, c2w, c2b, vw, vb, hidden):  # pragma: no cover - compiled
    """Row ``i``'s critic value through the plain trunk: one more ReLU layer, then the value head."""
    for j in range(hidden):
        a = c2b[j]
        for k in range(hidden):
            a += c2w[j, k] * h1[i, hidden + k]
        h2[i, j] = a if a > 0 else 0.0
    a = vb[0]
    for k in range(hidden):
        a += vw[0, k] * h2[i, k]
    return a


@njit(cache=True, inline="always")
def _critic_residual(h1, h2, i, rw1, rb1, rw2, rb2, vw, vb, hidden):  # pragma: no cover - compiled
    """Row ``i``'s critic value through the residual trunk: per block ``x += W_2 relu(W_1 x + b_1) + b_2``
    in place in ``h1[i, hidden:]``, then the value head."""
    width = vw.shape[1]
    for b in range(rw1.shape[0]):
        for j in range(width):
            a = rb1[b, j]
            for k in range(width):
                a += rw1[b, j, k] * h1[i, hidden + k]
            h2[i, j] = a if a > 0 else 0.0
        for j in range(width):
            a = rb2[b, j]
            for k in range(width):
                a += rw2[b, j, k] * h2[i, k]
            h1[i, hidden + j] += a
    a = vb[0]
    for k in range(width):
        a += vw[0, k] * h1[i, hidden + k]
    return a


@njit(cache=True, fastmath=True)
def net_forward(
    obs: np.ndarray,
    n: int,
    weights: tuple,
    feats: np.ndarray,
    h1: np.ndarray,
    h2: np.ndarray,
    ctx: np.ndarray,
    logits: np.ndarray,
    values: np.ndarray,
) -> None:
    """Actor logits ``[n, actions]`` and critic values ``[n]`` for the first ``n`` raw observations.

    The same arithmetic as :class:`agents.nets.policy_net.CardSlotPolicy` (checked against torch by
    :func:`check_export`); the other arrays are scratch buffers sized for the largest batch.
    """
    (inv_scale, w1t, b1, a2w, a2b, c2w, c2b, k1w, k1b, k2w, k2b, xw, xb, bw, bb, sw, sb, vw, vb, k1t, k2t) = (
        weights[:21]
    )
    rw1, rb1, rw2, rb2 = weights[21:25]
    plain = c2w.shape[0] > 0  # the critic's trunk (export_network)
    hidden = a2w.shape[0]
    width = b1.shape[0]
    dim = inv_scale.shape[0]
    acc = np.empty(width, dtype=np.float32)  # a local accumulator: LLVM vectorises it (h1[i] it did not)
    for i in range(n):
        f = feats[i]
        _features(obs[i], inv_scale, f)
        # first layer of both trunks, sparse: about two thirds of the features are zero
        for j in range(width):
            acc[j] = b1[j]
        for k in range(f.shape[0]):
            x = f[k]
            if x != 0:
                for j in range(width):
                    acc[j] += x * w1t[k, j]
        for j in range(width):
            h1[i, j] = acc[j] if acc[j] > 0 else np.float32(0.0)
    for i in range(n):  # critic: its second layer reads h1[:, hidden:]
        if plain:
            values[i] = _critic_plain(h1, h2, i, c2w, c2b, vw, vb, hidden)
        else:
            values[i] = _critic_residual(h1, h2, i, rw1, rb1, rw2, rb2, vw, vb, hidden)
    # actor trunk: second layer reads h1[:, :hidden]
    for i in range(n):
        for j in range(hidden):
            a = a2b[j]
            for k in range(hidden):
                a += a2w[j, k] * h1[i, k]
            h2[i, j] = a if a > 0 else 0.0
    _dense_batch(bw, bb, h2, logits, n, False)
    _dense_batch(xw, xb, h2, ctx, n, False)
    # card slots: per slot, the encoder's first layer as a sum of weight rows over the (few)
    # non-zero inputs, the one-hot slot id being one row; the second layer likewise
    n_hid = k1t.shape[1]
    n_z = k2t.shape[1]
    hk = np.empty(n_hid, dtype=np.float32)
    z = np.empty(n_z, dtype=np.float32)
    x_in = np.empty(CARD_DIM + 8, dtype=np.float32)
    for i in range(n):
        f = feats[i]
        for s in range(N_SLOTS):
            co = O_MARKET + s * CARD_DIM if s < 12 else O_SEATS + S_RES + (s - 12) * CARD_DIM
            for k in range(CARD_DIM):
                x_in[k] = f[co + k]
            for k in range(4):
                x_in[CARD_DIM + k] = f[dim + s * 4 + k]
                x_in[CARD_DIM + 4 + k] = f[dim + N_SLOTS * 4 + s * 4 + k] if s < 12 else 0.0
            for j in range(n_hid):
                hk[j] = k1b[j] + k1t[CARD_DIM + 8 + s, j]
            for k in range(CARD_DIM + 8):
                x = x_in[k]
                if x != 0:
                    for j in range(n_hid):
                        hk[j] += x * k1t[k, j]
            for j in range(n_z):
                z[j] = k2b[j] + ctx[i, j]
            for k in range(n_hid):
                x = hk[k]
                if x > 0:
                    for j in range(n_z):
                        z[j] += x * k2t[k, j]
            buy = sb[0]
            res = sb[1]
            for k in range(n_z):
                zk = z[k] if z[k] > 0 else np.float32(0.0)
                buy += sw[0, k] * zk
                res += sw[1, k] * zk
            a = BUY_MARKET + s if s < 12 else BUY_RESERVED + s - 12
            logits[i, a] += buy
            if s < 12:
                logits[i, RESERVE_MARKET + s] += res


@njit(cache=True, fastmath=True)
def net_values(
    obs: np.ndarray,
    n: int,
    weights: tuple,
    feats: np.ndarray,
    h1: np.ndarray,
    h2: np.ndarray,
    values: np.ndarray,
) -> None:
    """Critic values ``[n]`` alone (no actor) for the first ``n`` raw observations."""
    (inv_scale, w1t, b1, a2w, a2b, c2w, c2b, k1w, k1b, k2w, k2b, xw, xb, bw, bb, sw, sb, vw, vb, k1t, k2t) = (
        weights[:21]
    )
    rw1, rb1, rw2, rb2, w1c, b1c = weights[21:]
    plain = c2w.shape[0] > 0  # the critic's trunk (export_network)
    hidden = a2w.shape[0]
    # the critic's first layer from its own contiguous copy (w1c, b1c): indexed from 0 up to the
    # array's own width, the loop vectorises; read in place from w1t[:, hidden:] it ran 6x slower
    width = w1c.shape[1]
    acc = np.empty(width, dtype=np.float32)
    for i in range(n):
        f = feats[i]
        _features(obs[i], inv_scale, f)
        for j in range(width):
            acc[j] = b1c[j]
        for k in range(f.shape[0]):
            x = f[k]
            if x != 0:
                for j in range(width):
                    acc[j] += x * w1c[k, j]
        for j in range(width):
            h1[i, hidden + j] = acc[j] if acc[j] > 0 else np.float32(0.0)
        if plain:
            values[i] = _critic_plain(h1, h2, i, c2w, c2b, vw, vb, hidden)
        else:
            values[i] = _critic_residual(h1, h2, i, rw1, rb1, rw2, rb2, vw, vb, hidden)


class NetBuffers:
    """Scratch arrays for :func:`net_forward` with batches of up to ``size`` observations
    (``others`` more rows for the critic alone: the other seats' views of a leaf)."""

    def __init__(self, weights: tuple[np.ndarray, ...], size: int, others: int | None = None) -> None:
        hidden = weights[3].shape[0]
        slot_dim = weights[9].shape[0]
        f32 = np.float32
        rows = max(size, size if others is None else others)
        self.feats = np.zeros((rows, feature_dim(weights)), f32)
        self.h1 = np.zeros((rows, weights[2].shape[0]), f32)  # both first layers
        self.h2 = np.zeros((rows, max(hidden, weights[17].shape[1])), f32)  # actor or critic scratch
        self.ctx = np.zeros((size, slot_dim), f32)
        self.logits = np.zeros((size, num_actions_of(weights)), f32)
        self.values = np.zeros(size, f32)
        self.other_values = np.zeros(rows, f32)

    def args(self) -> tuple[np.ndarray, ...]:
        return (
            self.feats,
            self.h1,
            self.h2,
            self.ctx,
            self.logits,
            self.values,
        )

    def search_args(self) -> tuple[np.ndarray, ...]:
        return (*self.args(), self.other_values)


def forward_numpy(weights: tuple[np.ndarray, ...], observations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Logits and values of raw observations ``[B, obs]`` through :func:`net_forward` (for checks)."""
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    buf = NetBuffers(weights, obs.shape[0])
    net_forward(obs, obs.shape[0], weights, *buf.args())
    return buf.logits.copy(), buf.values.copy()


def check_export(policy: Any, weights: tuple[np.ndarray, ...], observations: np.ndarray) -> float:
    """Largest difference between torch's logits/values and :func:`net_forward`'s (raises if > 1e-3)."""
    import torch as th

    threads = th.get_num_threads()
    th.set_num_threads(1)  # a tiny batch: no thread pool (its idle workers would compete with the search)
    try:
        ref_logits, ref_values = _torch_outputs(policy, observations)
    finally:
        th.set_num_threads(threads)
    logits, values = forward_numpy(weights, observations)
    err = float(max(np.abs(logits - ref_logits).max(), np.abs(values - ref_values).max()))
    if not err < 1e-3:
        raise ValueError(f"exported network differs from torch by {err:.3g}: an unsupported policy layout?")
    return err


def _torch_outputs(policy: Any, observations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    import torch as th

    with th.no_grad():
        obs = th.as_tensor(np.asarray(observations, dtype=np.float32))
        features = policy.pi_features_extractor(obs)
        ref_logits = policy.action_net(policy.mlp_extractor.forward_actor(features)).numpy()
        vf = policy.vf_features_extractor(obs)
        ref_values = policy.value_net(policy.mlp_extractor.forward_critic(vf)).numpy()[:, 0]
    return ref_logits, ref_values


def feature_dim(weights: tuple[np.ndarray, ...]) -> int:
    """Width of the network's input features: its observation plus the card gaps."""
    return int(weights[0].shape[0]) + CARD_GAP_DIM


def observation_size(weights: tuple[np.ndarray, ...]) -> int:
    """Observation floats the exported network reads (497 for a base-game network)."""
    return int(weights[0].shape[0])


def num_actions_of(weights: tuple[np.ndarray, ...]) -> int:
    """Action ids the exported network scores (its head's width)."""
    return int(weights[13].shape[0])


@njit(cache=True)
def seat_values(raw: np.ndarray, n: int, out: np.ndarray) -> None:
    """Per-seat search values from per-seat raw scores: ``(r_p - mean of the others) / 2``.

    Why: the critic learnt each seat's return against its training pool, so at the
    start of a game it rates every seat a likely winner (about +0.85 each); the
    difference to the other seats is what tells positions apart, and it sums to zero.
    Two players: ``(V_p - V_q) / 2``, the value ``az`` always used. The same map turns
    the engine's terminal rewards (:func:`splendor_env.rules.terminal_rewards`: +1 sole
    winner, -1 losers, 0 shared or truncated) into values on the same scale: a sole
    winner gets +1 whatever the player count.
    """
    for p in range(n):
        others = 0.0
        for q in range(n):
            if q != p:
                others += raw[q]
        out[p] = 0.5 * (raw[p] - others / (n - 1))
    for p in range(n, out.shape[0]):
        out[p] = 0.0
