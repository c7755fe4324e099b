"""Greedy's choices are pinned: a refactor of :mod:`agents.players.greedy` must not change a single action.

Greedy is an opponent, the rollout policy inside MCTS and the warm-start
teacher, so the same observation must always give the same move and consume
the same random draws. The digests below were computed from the code before
the base and module heuristics were made to share their parts; a change of
the heuristic (or of the rules, which moves the positions) changes them, and
the new digest goes in with the commit that says why.
"""

from __future__ import annotations

import hashlib

import numpy as np

import agents
from agents.players.greedy import policy_action
from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import num_actions
from splendor_env.deal import new_state
from splendor_env.observation import obs_dim, observe

#: (players, modules, positions): base games at every table size, each module alone and all four.
CONFIGS = (
    [(2, (), 30), (3, (), 25), (4, (), 25)]
    + [(2 + k % 3, (m,), 25) for k, m in enumerate(st.MODULE_NAMES)]
    + [(2, st.MODULE_NAMES, 20), (3, st.MODULE_NAMES, 20), (4, st.MODULE_NAMES, 20)]
)
#: (noise, eps) of the kernel calls: the agent's tie-break, and MCTS rollouts (noisy, epsilon-random).
SETTINGS = ((1e-6, 0.0), (0.5, 0.1))
DIGEST = "88ec5ab77d16294d"


def positions() -> list[tuple[np.ndarray, np.ndarray]]:
    """Seeded positions from games where greedy and random moves alternate at random (every phase shows up)."""
    out = []
    for players, modules, count in CONFIGS:
        seed = 97 * players + len(modules)
        s = new_state(players, seed, modules=modules)
        rng = np.random.default_rng(seed)
        mover = agents.make("greedy", seed=seed)
        got = 0
        while got < count:
            if rules.is_over(s):
                seed += 1
                s = new_state(players, seed, modules=modules)
            bits = int(s[st.MODULES])
            obs = np.empty(obs_dim(bits), dtype=np.float32)
            observe(s, int(s[st.CURRENT]), obs)
            mask = np.zeros(num_actions(bits), dtype=np.int8)
            rules.legal_mask(s, mask)
            if rng.random() < 0.4 or (modules and s[st.PHASE] != st.PHASE_MAIN):
                out.append((obs, mask))
                got += 1
            a = int(rng.choice(np.flatnonzero(mask))) if rng.random() < 0.4 else int(mover.act(obs, mask))
            rules.apply_action(s, a)
    return out


def greedy_trace() -> list[int]:
    """Per position: the agent's action, then per kernel setting the action and the rng stream after it."""
    trace = []
    for k, (obs, mask) in enumerate(positions()):
        trace.append(int(agents.make("greedy", seed=k).act(obs, mask)))
        for noise, eps in SETTINGS:
            stream = np.array([1_000_003 * k + 11], dtype=np.uint64)
            trace.append(int(policy_action(obs, mask, stream, noise, eps)))
            trace.append(int(stream[0] >> np.uint64(1)))
    return trace


def test_greedy_actions_unchanged() -> None:
    trace = greedy_trace()
    assert len(trace) == (1 + 2 * len(SETTINGS)) * sum(c for _, _, c in CONFIGS)
    digest = hashlib.sha256(np.asarray(trace, dtype=np.int64).tobytes()).hexdigest()[:16]
    assert digest == DIGEST
