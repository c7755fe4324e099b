"""PUCT search guided by a trained policy (spec ``az:models/ppo_2p.zip,sims=...``), two-player base game.

Why: the PPO policy alone (``ppo:models/ppo_2p.zip``) plays one move from its
first impression; a search that uses its policy as the prior and its critic as
the leaf evaluation looks ahead where the network is unsure, the AlphaZero
recipe, without any new training.

One decision (all inside numba, :func:`search`):

* every simulation starts from the given state, which the caller has already
  determinised for the acting seat (``training.tournament.agent_state``), and
  re-determinises it (:func:`splendor_env.determinize.determinize_inplace`:
  deck order and the opponent's blind reserves are resampled), so nothing
  hidden from the seat is ever used and each simulation sees one plausible
  world; tree nodes are keyed by action sequence (single-observer ISMCTS), and
  only the actions legal in the simulation's world compete at a node;
* selection is PUCT, ``Q + c * P * sqrt(N) / (1 + n)``, ``Q`` from the view of
  the seat on move at the node (a discard or noble choice is a level of the
  same seat: the sign changes only when the seat on move changes), an
  unvisited child counts ``Q`` of its parent minus ``fpu``;
* a leaf is evaluated by the network: the prior is the softmax of its actor
  logits over the legal moves (temperature ``ptemp``); the value is half the
  difference of the critic's outputs for the two seats' views,
  ``(V(on move) - V(other)) / 2``. Why the difference: the critic learnt the
  learner's return against its training pool (terminal +-1 plus 0.02 per
  point, gamma 0.995), so at the start of a game it rates *both* seats about
  +0.85; taken alone for the seat on move it would make every position where
  the searching seat is still on move (a discard, a noble) look 1.7 better
  than one where the opponent is. A finished game is worth its real result
  (+1, -1, 0 shared or truncated);
* leaves are evaluated ``batch`` at a time (virtual loss keeps the
  simulations of one batch apart) in one call of the numba network, which
  reads each weight row once for the whole batch;
* the move played is the most visited root action (the value breaks ties).

The network is the PPO checkpoint's own (:class:`agents.ppo.CardSlotPolicy`),
exported once to float32 arrays and evaluated by :func:`net_forward` in numba
(no torch call per leaf, whose fixed cost alone would be 50-100 us; the first
layer and the card encoder add one weight row per non-zero input, and about
two thirds of the inputs are zero): about 15 us a position on one core. The agent checks the
export against torch on two positions when it is built (:func:`check_export`). A policy trained with ``network.policy=mlp``
is not supported (only the card-slot network is exported).

Budget: ``sims`` simulations per move, or ``ms`` milliseconds (then the search
runs in chunks of ``4 * batch`` simulations until the time is up, and is no
longer reproducible from the seed alone). The default, 1000 simulations, takes
about 33 ms a move on one core of this machine (see the README).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import BUY_MARKET, BUY_RESERVED, NUM_ACTIONS, RESERVE_MARKET
from splendor_env.determinize import determinize_inplace
from splendor_env.observation import (
    CARD_DIM,
    O_MARKET,
    O_SEATS,
    OBS_DIM,
    S_BONUS,
    S_RES,
    S_TOKENS,
    SEAT_DIM,
    observe,
)
from splendor_env.state import CURRENT, OUTCOME, PHASE, PHASE_GAME_OVER

from .base import Agent, search_inputs, typed_options

#: The network shipped with the repository, used by the bare spec ``az``.
DEFAULT_MODEL = str(Path(__file__).resolve().parent.parent / "models" / "ppo_2p.zip")

#: name -> (type, default, help) for every option of the ``az`` spec.
PARAMS: dict[str, tuple[type, object, str]] = {
    "sims": (int, 1000, "simulations per move (> 0); the budget unless ms is given"),
    "ms": (float, 0.0, "time budget in milliseconds per move (> 0 replaces sims; 0 = off)"),
    "c": (float, 1.5, "PUCT exploration constant (>= 0)"),
    "fpu": (float, 0.2, "first-play urgency reduction: an unvisited child counts Q(parent) - fpu (>= 0)"),
    "batch": (int, 8, "leaves evaluated together per network call (1..64)"),
    "ptemp": (float, 1.0, "temperature of the prior softmax (> 0)"),
}

N_SLOTS = 15
GAP_DIM = 2 * N_SLOTS * 4
FEAT_DIM = OBS_DIM + GAP_DIM
_BUY_IDS = np.array(list(range(BUY_MARKET, BUY_MARKET + 12)) + list(range(BUY_RESERVED, BUY_RESERVED + 3)))


# ---------------------------------------------------------------------------
# The network in numba


def export_network(policy: Any) -> tuple[np.ndarray, ...]:
    """The card-slot policy's weights as contiguous float32 arrays, in :func:`net_forward`'s order."""
    from .ppo import CardSlotExtractor, CardSlotHead

    ex = policy.mlp_extractor
    if not isinstance(ex, CardSlotExtractor) or not isinstance(policy.action_net, CardSlotHead):
        raise ValueError(
            "the az agent needs a card-slot policy (network.policy=card_slots, like models/ppo_2p.zip)"
        )
    if not getattr(policy.pi_features_extractor, "card_features", False):
        raise ValueError("the az agent needs a policy whose ScaledObs has card_features=True")

    def arr(t: Any) -> np.ndarray:
        return np.ascontiguousarray(t.detach().cpu().numpy(), dtype=np.float32)

    a1, a2 = ex.actor[0], ex.actor[2]
    c1, c2 = ex.critic[0], ex.critic[2]
    k1, k2 = ex.card[0], ex.card[2]
    head = policy.action_net
    # the first layers of actor and critic read the same features: one [in, 2 * hidden] matrix,
    # transposed so that each (often zero) input feature adds one contiguous row
    w1t = np.ascontiguousarray(np.concatenate([arr(a1.weight), arr(c1.weight)], axis=0).T)
    b1 = np.concatenate([arr(a1.bias), arr(c1.bias)])
    return (
        arr(policy.pi_features_extractor.inv_scale),
        w1t, b1, arr(a2.weight), arr(a2.bias), arr(c2.weight), arr(c2.bias),
        arr(k1.weight), arr(k1.bias), arr(k2.weight), arr(k2.bias),
        arr(ex.context.weight), arr(ex.context.bias),
        arr(head.base.weight), arr(head.base.bias), arr(head.slot.weight), arr(head.slot.bias),
        arr(policy.value_net.weight), arr(policy.value_net.bias),
        np.ascontiguousarray(arr(k1.weight).T), np.ascontiguousarray(arr(k2.weight).T),
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
    """:class:`agents.ppo.ScaledObs` with card features: scaled observation, then the card gaps."""
    for k in range(OBS_DIM):
        f[k] = obs[k] * inv_scale[k]
    for rel in range(2):
        so = O_SEATS + rel * SEAT_DIM
        for i in range(N_SLOTS):
            co = O_MARKET + i * CARD_DIM if i < 12 else so + S_RES + (i - 12) * CARD_DIM
            base = OBS_DIM + rel * N_SLOTS * 4 + i * 4
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
def seat_value_difference(v_mover, v_other):  # pragma: no cover - compiled
    """az's evaluation for the seat on move: half the difference of the critic's values of the two
    seats' observations. The critic learnt the return against its training pool, so both seats of
    a fresh game look like winners (about +0.85 each); the half difference is zero-sum. Works on
    scalars and arrays (``training.value_report`` scores it)."""
    return 0.5 * (v_mover - v_other)


@njit(cache=True, inline="always")
def _critic_value(h1, h2, i, c2w, c2b, vw, vb, hidden):  # pragma: no cover - compiled
    """Row ``i``'s critic value from its first-layer activations ``h1[i, hidden:]`` (``h2[i]`` is scratch)."""
    for j in range(hidden):
        a = c2b[j]
        for k in range(hidden):
            a += c2w[j, k] * h1[i, hidden + k]
        h2[i, j] = a if a > 0 else 0.0
    a = vb[0]
    for k in range(hidden):
        a += vw[0, k] * h2[i, k]
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
    """Actor logits ``[n, 72]`` and critic values ``[n]`` for the first ``n`` raw observations.

    The same arithmetic as :class:`agents.ppo.CardSlotPolicy` (checked against torch by
    :func:`check_export`); the other arrays are scratch buffers sized for the largest batch.
    """
    (inv_scale, w1t, b1, a2w, a2b, c2w, c2b, k1w, k1b, k2w, k2b, xw, xb, bw, bb, sw, sb, vw, vb, k1t, k2t) = (
        weights
    )
    hidden = a2w.shape[0]
    width = b1.shape[0]
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
        values[i] = _critic_value(h1, h2, i, c2w, c2b, vw, vb, hidden)
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
                x_in[CARD_DIM + k] = f[OBS_DIM + s * 4 + k]
                x_in[CARD_DIM + 4 + k] = f[OBS_DIM + N_SLOTS * 4 + s * 4 + k] if s < 12 else 0.0
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
        weights
    )
    hidden = a2w.shape[0]
    acc = np.empty(hidden, dtype=np.float32)
    for i in range(n):
        f = feats[i]
        _features(obs[i], inv_scale, f)
        for j in range(hidden):
            acc[j] = b1[hidden + j]
        for k in range(f.shape[0]):
            x = f[k]
            if x != 0:
                for j in range(hidden):
                    acc[j] += x * w1t[k, hidden + j]
        for j in range(hidden):
            h1[i, hidden + j] = acc[j] if acc[j] > 0 else np.float32(0.0)
        values[i] = _critic_value(h1, h2, i, c2w, c2b, vw, vb, hidden)


class NetBuffers:
    """Scratch arrays for :func:`net_forward` with batches of up to ``size`` observations."""

    def __init__(self, weights: tuple[np.ndarray, ...], size: int) -> None:
        hidden = weights[3].shape[0]
        slot_dim = weights[9].shape[0]
        f32 = np.float32
        self.feats = np.zeros((size, FEAT_DIM), f32)
        self.h1 = np.zeros((size, 2 * hidden), f32)
        self.h2 = np.zeros((size, hidden), f32)
        self.ctx = np.zeros((size, slot_dim), f32)
        self.logits = np.zeros((size, NUM_ACTIONS), f32)
        self.values = np.zeros(size, f32)
        self.other_values = np.zeros(size, f32)

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
    """Logits and values of raw observations ``[B, 497]`` through :func:`net_forward` (for checks)."""
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


# ---------------------------------------------------------------------------
# The search


@njit(cache=True)
def _terminal_value(s: np.ndarray, p: int) -> float:
    """The real result for seat ``p``: +1 sole win, -1 loss, 0 shared victory or truncation."""
    if s[PHASE] != PHASE_GAME_OVER:
        return 0.0
    if s[OUTCOME + p] == 0:
        return -1.0
    k = 0
    for q in range(s[st.N_PLAYERS]):
        k += s[OUTCOME + q]
    return 1.0 if k == 1 else 0.0


@njit(cache=True)
def search(
    root: np.ndarray,
    seat: int,
    sims: int,
    c_puct: float,
    fpu: float,
    batch: int,
    ptemp: float,
    weights: tuple,
    tree: tuple,
    n_nodes_in: int,
    rng: np.ndarray,
    obs: np.ndarray,
    feats: np.ndarray,
    h1: np.ndarray,
    h2: np.ndarray,
    ctx: np.ndarray,
    logits: np.ndarray,
    values: np.ndarray,
    other_values: np.ndarray,
) -> int:
    """Run ``sims`` more simulations on ``tree`` (node 0 = root); returns the new node count.

    ``tree`` = ``(child [M, 72] int32, prior [M, 72] float32, visits [M], wsum [M],
    mover [M] int32, expanded [M] int8, paths [batch, M] int32, plens [batch] int32,
    leaf_player [batch] int32, leaf_node [batch] int32, leaf_value [batch])``; ``wsum`` is kept
    from the view of the seat that moved into the node (``mover``). Called again with the
    returned count, it goes on where it stopped (the ``ms`` budget runs it in chunks).
    """
    child, prior, visits, wsum, mover, expanded, paths, plens, leaf_player, leaf_node, leaf_value = tree
    other_obs = np.zeros_like(obs)
    max_nodes = child.shape[0]
    d = np.empty_like(root)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    leaf_mask = np.zeros((batch, NUM_ACTIONS), dtype=np.int8)
    n_nodes = n_nodes_in
    done = 0
    while done < sims:
        k_batch = min(batch, sims - done)
        n_eval = 0
        for j in range(k_batch):
            d[:] = root
            determinize_inplace(d, seat, rng)
            node = 0
            plen = 1
            paths[j, 0] = 0
            value = 0.0
            player = d[CURRENT]
            leaf = False
            while True:
                player = d[CURRENT]
                if rules.is_over(d):
                    value = _terminal_value(d, player)
                    break
                rules.legal_mask(d, mask)
                if expanded[node] == 0:
                    leaf = True
                    break
                # PUCT over the actions legal in this world
                sq = math.sqrt(visits[node] + 1.0)
                q_parent = 0.0
                if visits[node] > 0:
                    q_parent = wsum[node] / visits[node]
                    if mover[node] != player:
                        q_parent = -q_parent
                psum = 0.0
                n_legal = 0
                for a in range(NUM_ACTIONS):
                    if mask[a]:
                        psum += prior[node, a]
                        n_legal += 1
                best_a = -1
                best_u = -1e30
                for a in range(NUM_ACTIONS):
                    if not mask[a]:
                        continue
                    p = prior[node, a] / psum if psum > 0 else 1.0 / n_legal
                    ch = child[node, a]
                    if ch >= 0 and visits[ch] > 0:
                        q = wsum[ch] / visits[ch]
                        n_ch = visits[ch]
                    else:
                        q = q_parent - fpu
                        n_ch = 0.0
                    u = q + c_puct * p * sq / (1.0 + n_ch)
                    if u > best_u:
                        best_u = u
                        best_a = a
                ch = child[node, best_a]
                if ch < 0:
                    if n_nodes >= max_nodes:  # tree full: evaluate here
                        leaf = True
                        break
                    ch = n_nodes
                    n_nodes += 1
                    child[node, best_a] = ch
                    mover[ch] = player
                rules.apply_action(d, best_a)
                node = ch
                paths[j, plen] = node
                plen += 1
                # virtual loss: a pending simulation counts as a loss for the seat that chose it
                visits[node] += 1.0
                wsum[node] -= 1.0
            plens[j] = plen
            leaf_node[j] = node
            leaf_player[j] = player
            if leaf:
                observe(d, player, obs[n_eval])
                observe(d, 1 - player, other_obs[n_eval])
                for a in range(NUM_ACTIONS):
                    leaf_mask[n_eval, a] = mask[a]
                leaf_value[j] = -1e9 - n_eval  # placeholder: index into the evaluated batch
                n_eval += 1
            else:
                leaf_value[j] = value
        if n_eval > 0:
            net_forward(obs, n_eval, weights, feats, h1, h2, ctx, logits, values)
            net_values(other_obs, n_eval, weights, feats, h1, h2, other_values)
        for j in range(k_batch):
            node = leaf_node[j]
            value = leaf_value[j]
            if value < -1e8:
                e = int(-(value + 1e9) + 0.5)
                value = seat_value_difference(values[e], other_values[e])
                if expanded[node] == 0:
                    mx = -1e30
                    for a in range(NUM_ACTIONS):
                        if leaf_mask[e, a] and logits[e, a] > mx:
                            mx = logits[e, a]
                    tot = 0.0
                    for a in range(NUM_ACTIONS):
                        if leaf_mask[e, a]:
                            pr = math.exp((logits[e, a] - mx) / ptemp)
                            prior[node, a] = pr
                            tot += pr
                        else:
                            prior[node, a] = 0.0
                    for a in range(NUM_ACTIONS):
                        prior[node, a] /= tot
                    expanded[node] = 1
            lp = leaf_player[j]
            visits[0] += 1.0
            wsum[0] += value if mover[0] == lp else -value
            for i in range(1, plens[j]):
                nd = paths[j, i]
                wsum[nd] += 1.0  # undo the virtual loss (the visit stays: it is this simulation's)
                wsum[nd] += value if mover[nd] == lp else -value
        done += k_batch
    return n_nodes


def validate_params(params: dict[str, object]) -> dict[str, object]:
    """Typed, range-checked ``az`` options (defaults filled in); errors name the option."""
    out = typed_options("az option", PARAMS, params, " (and a model path first)")
    checks = {
        "sims": out["sims"] > 0,
        "ms": out["ms"] >= 0,
        "c": out["c"] >= 0,
        "fpu": out["fpu"] >= 0,
        "batch": 1 <= out["batch"] <= 64,
        "ptemp": out["ptemp"] > 0,
    }
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        raise ValueError(
            "az option(s) out of range: " + ", ".join(f"{k}={out[k]!r} ({PARAMS[k][2]})" for k in bad)
        )
    return out


def parse_az_spec(rest: str) -> tuple[str, dict[str, str]]:
    """``"models/x.zip,sims=100"`` -> ``("models/x.zip", {"sims": "100"})``; no path: the shipped model."""
    from . import parse_options

    parts = [p.strip() for p in rest.split(",")] if rest else []
    path = DEFAULT_MODEL
    if parts and parts[0] and "=" not in parts[0]:
        path = parts.pop(0)
    return path, parse_options(",".join(parts))


class AZAgent(Agent):
    """PUCT over determinised states with a PPO network as prior and value (module docstring).

    ``act`` needs ``state=``, a state already determinised for the acting seat (as for ``mcts``).
    Two-player base game only (the network was trained for it).
    """

    name = "az"
    needs_state = True
    plays_modules = False

    def __init__(
        self, path: str | Path | None = None, seed: int | None = None, model: Any = None, **params: object
    ):
        super().__init__(seed)
        self.params = validate_params(params)
        from .ppo import PPOAgent

        self.ppo = PPOAgent(path if path is not None else DEFAULT_MODEL, model=model, seed=seed)
        self.ppo.check_game(2, ())
        self.label = self.ppo.label
        self.weights = export_network(self.ppo.policy)
        probe = np.zeros((2, OBS_DIM), dtype=np.float32)
        s = st.new_state(2, 0)
        observe(s, 0, probe[0])
        observe(s, 1, probe[1])
        check_export(self.ppo.policy, self.weights, probe)
        self._alloc()

    def _alloc(self) -> None:
        p = self.params
        batch = int(p["batch"])
        # the ms budget has no simulation count: the tree grows in chunks up to this many nodes
        self.max_nodes = int(p["sims"]) + 1 if p["ms"] == 0 else 20_000
        self.n_used = self.max_nodes
        m = self.max_nodes
        self.tree = (
            np.full((m, NUM_ACTIONS), -1, dtype=np.int32),
            np.zeros((m, NUM_ACTIONS), dtype=np.float32),
            np.zeros(m),
            np.zeros(m),
            np.zeros(m, dtype=np.int32),
            np.zeros(m, dtype=np.int8),
            np.zeros((batch, m + 1), dtype=np.int32),
            np.zeros(batch, dtype=np.int32),
            np.zeros(batch, dtype=np.int32),
            np.zeros(batch, dtype=np.int32),
            np.zeros(batch),
        )
        self.obs = np.zeros((batch, OBS_DIM), dtype=np.float32)
        self.buf = NetBuffers(self.weights, batch)

    def check_game(self, num_players: int, modules: list[str] | tuple[str, ...] = ()) -> None:
        """Two players, base game: refuse anything else naming what differs."""
        if int(num_players) != 2 or tuple(modules):
            raise ValueError(
                f"agent 'az' plays only the 2-player base game (its network {self.label!r} was trained for it); "
                f"got {num_players} players, modules {list(modules) or 'none'}"
            )

    def _reset_tree(self, seat: int) -> None:
        child, prior, visits, wsum, mover, expanded = self.tree[:6]
        n = self.n_used
        child[:n] = -1
        visits[:n] = 0.0
        wsum[:n] = 0.0
        expanded[:n] = 0
        mover[0] = seat  # the root's value is kept from the acting seat's view

    def root_visits(self, state: np.ndarray) -> np.ndarray:
        """Visit count of every root action after one search from ``state`` (seat on move)."""
        p = self.params
        s = np.ascontiguousarray(state, dtype=np.int32)
        seat = int(s[CURRENT])
        rng = np.array([self.rng.integers(0, 2**63)], dtype=np.uint64)
        self._reset_tree(seat)
        common = (float(p["c"]), float(p["fpu"]), int(p["batch"]), float(p["ptemp"]), self.weights, self.tree)
        scratch = (rng, self.obs, *self.buf.search_args())
        deadline = time.perf_counter() + float(p["ms"]) / 1000.0
        n = search(s, seat, 1, *common, 1, *scratch)  # the root alone first: its prior guides the rest
        if p["ms"] == 0:
            n = search(s, seat, int(p["sims"]) - 1, *common, n, *scratch)
        else:
            chunk = 4 * int(p["batch"])
            while time.perf_counter() < deadline and n < self.max_nodes - chunk:
                n = search(s, seat, chunk, *common, n, *scratch)
        self.n_used = n
        child, visits, wsum = self.tree[0], self.tree[2], self.tree[3]
        counts = np.zeros(NUM_ACTIONS)
        for a in np.flatnonzero(child[0] >= 0):
            ch = child[0, a]
            counts[a] = visits[ch] + 0.25 * (1.0 + wsum[ch] / max(visits[ch], 1.0))  # value breaks ties
        return counts

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        if state is not None:
            s = np.asarray(state)
            if s.shape[0] != st.STATE_SIZE or s[st.MODULES] != 0 or s[st.N_PLAYERS] != 2:
                raise ValueError("agent 'az' plays only the 2-player base game; state= is not one")
        s, legal, mask = search_inputs("AZAgent", state, action_mask)
        if legal.size == 1:
            return int(legal[0])
        counts = self.root_visits(s)
        return int(np.argmax(np.where(mask != 0, counts, -1.0)))

    def __repr__(self) -> str:
        return f"AZAgent({self.label!r}, {', '.join(f'{k}={v}' for k, v in self.params.items())})"
