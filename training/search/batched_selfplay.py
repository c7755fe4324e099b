"""Batched self-play: one worker plays all of a job's games at once and searches their moves in step.

Why: :func:`training.search.selfplay.selfplay_job` plays its games one after the other, each move a
search that calls the network for 8 leaves at a time. Here every game waiting for a search hands
its root to one :class:`agents.search_batch.BatchedSearch`, which runs all the roots' simulations
round by round and evaluates their leaves together: in torch on a GPU (``batched_device``
``"cuda"``, or ``"auto"`` when torch sees one), where a call of a thousand leaves costs what eight
cost on the CPU, or in numba on this core (``"cpu"``: the per-game path's games bit for bit, at
about its speed, since the numba network costs the same per leaf in any batch). One process,
100 simulations a move, ``az_2p``, on the H100 machine (its CPU is about half as fast as the
2-core dev box): 1,113 positions/s with 256 games on the GPU against 276-383 for the per-game path.

Same games, same targets. Each game keeps the per-game path's random streams
(:func:`training.search.selfplay.game_seeds`): the deal, the determinisation of every decision
(:func:`agents.runner.decision_state`, drawn from the game's own generator), one search seed per
searched decision (drawn from the search's generator, as ``AZAgent.root_visits`` does; with
``selfplay.root: gumbel`` a full search's Gumbel noise next, as ``AZAgent.gumbel_search`` draws it), the move
sampling (:func:`~training.search.selfplay.choose_move`). Games are independent given their seeds,
so playing them interleaved changes nothing: with the numba evaluator a job's positions and
records equal :func:`~training.search.selfplay.selfplay_job`'s bit for bit
(``tests/test_batched_selfplay.py``). With torch the network's rounding differs from numba's,
so the visit counts, and from the first differing move the games, differ.

Games against fixed opponents (``selfplay.opponents`` with ``opponent_share``) are played by the
per-game path: their opponents are agent objects reseeded per game and shared by all games of a
job, so playing those games interleaved would interleave the opponents' random streams; no
shipped config has opponents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.runner import decision_state
from agents.search_batch import LANE_TREES, BatchedSearch
from agents.subtree import same_information
from agents.torch_evaluator import TorchEvaluator
from splendor_env import state as st
from splendor_env.env import raw_env
from splendor_env.records import game_record
from splendor_env.rules import terminal_rewards
from splendor_env.state import CURRENT, MAX_PLAYERS
from training.search.network import cached_agent
from training.search.replay import FIELDS, Positions, concat, count
from training.search.selfplay import (
    SearchRecorder,
    game_seeds,
    make_recorder,
    opponent_game,
    selfplay_job,
)

#: Most games played at once by one worker (each holds a tree of ``sims + 1`` nodes).
MAX_GAMES_AT_ONCE = 256


@dataclass
class _Game:
    """One game in play: its env, its random streams (as the per-game path seeds them) and its rows."""

    index: int
    num_players: int
    seeds: tuple[int, int, int]
    env: raw_env
    rng: np.random.Generator  # determinisations (play_game's rng)
    search_rng: np.random.Generator  # the search seeds (the az agent's)
    recorder: SearchRecorder  # its decisions and move sampling (the recorder's rng)
    actions: list[int] = field(default_factory=list)
    # selfplay.reuse: the moves since its last PUCT search (None: none yet), that search's tree and root
    since: list[int] | None = None
    tree: int = -1
    last_root: np.ndarray | None = None
    # obs, mask, index, root, search seed, (full search, recorded), Gumbel noise (None: a PUCT root)
    waiting: (
        tuple[np.ndarray, np.ndarray, int, np.ndarray, int, tuple[bool, bool], np.ndarray | None] | None
    ) = None


def _start(
    index: int, num_players: int, modules: tuple[str, ...], seeds: tuple[int, int, int], sp: dict[str, Any]
) -> _Game:
    """Deal game ``index`` as :func:`training.search.selfplay.play_selfplay_game` does."""
    deal, search, sample = seeds
    env = raw_env(num_players=num_players, modules=modules, max_turns=sp["max_turns"])
    env.reset(seed=deal)
    recorder = make_recorder(None, sp)
    recorder.seed(sample)
    recorder.streams(sample)
    return _Game(
        index,
        num_players,
        seeds,
        env,
        np.random.default_rng(sample + 1),
        np.random.default_rng(search),
        recorder,
    )


def _over(game: _Game) -> bool:
    return int(game.env.game_state[st.PHASE]) in (st.PHASE_GAME_OVER, st.PHASE_TRUNCATED)


def _advance(game: _Game) -> None:
    """Play ``game``'s forced moves until it needs a search (``game.waiting``) or ends; the random
    draws of each decision in the per-game path's order (determinisation, the search seed, Gumbel's noise)."""
    env = game.env
    while not _over(game):
        seat = int(env.game_state[CURRENT])
        view = env.observe(env.agent_selection)
        state = decision_state(SearchRecorder, env.game_state, seat, game.rng)
        rec = game.recorder
        index, rec.decisions = rec.decisions, rec.decisions + 1
        legal = np.flatnonzero(view["action_mask"])
        if legal.size == 1:  # a forced move teaches the policy nothing (SearchRecorder.act)
            env.step(int(legal[0]))
            game.actions.append(int(legal[0]))
            if game.since is not None:
                game.since.append(int(legal[0]))
            continue
        seed = int(game.search_rng.integers(0, 2**63))
        plan = rec.plan()
        # a full search with Gumbel's root draws its noise next, as AZAgent.gumbel_search does
        noise = game.search_rng.gumbel(size=legal.size) if plan[0] and rec.root == "gumbel" else None
        game.waiting = (view["observation"], view["action_mask"], index, state, seed, plan, noise)
        return


def _finish(game: _Game) -> tuple[Positions, dict[str, Any]]:
    """The game's positions and record, as :func:`~training.search.selfplay.play_selfplay_game` writes them."""
    env = game.env
    record = game_record(env, game.seeds[0], ["az"] * game.num_players, game.actions)
    rewards = np.zeros(MAX_PLAYERS)
    terminal_rewards(env.game_state, rewards)
    space = env.observation_space(env.possible_agents[0])
    return game.recorder.positions(
        rewards, space["observation"].shape[0], space["action_mask"].shape[0], env.game_state
    ), record


def _record(game: _Game, counts: np.ndarray, root_value: float) -> int:
    """Write down the waiting decision with its search's ``counts`` as ``SearchRecorder.act`` does; its move."""
    observation, mask, index, state, _, plan, _ = game.waiting
    game.waiting = None
    game.recorder.turn = int(state[st.TURN])  # the aux targets' turn (SearchRecorder.act sets it)
    return game.recorder.respond(observation, mask, index, int(state[CURRENT]), counts, root_value, plan)


def _record_gumbel(game: _Game, move: int, policy: np.ndarray, root_value: float) -> int:
    """Write down the waiting decision with its Gumbel search's target as ``SearchRecorder.act`` does; ``move``."""
    observation, mask, index, state, _, plan, _ = game.waiting
    game.waiting = None
    game.recorder.turn = int(state[st.TURN])
    if plan[1]:
        game.recorder.note(observation, mask, index, int(state[CURRENT]), policy, root_value)
    return move


def _search_inputs(
    games: list[_Game], params: dict[int, tuple[float, float, float]]
) -> tuple[np.ndarray, ...]:
    """The waiting roots of ``games``, their search seeds and their ``c``, ``fpu`` and ``ptemp``."""
    roots = np.array([gm.waiting[3] for gm in games], dtype=np.int32)
    seeds = np.array([gm.waiting[4] for gm in games], dtype=np.uint64)
    c, fpu, ptemp = (np.array([params[gm.num_players][i] for gm in games]) for i in range(3))
    return roots, seeds, c, fpu, ptemp


def _play(game: _Game, action: int) -> None:
    game.env.step(action)
    game.actions.append(action)


def make_evaluator(az: Any, device: str) -> Any:
    """``None`` (numba on this core: the per-game path's trees) for ``device="cpu"``; else a
    :class:`agents.torch_evaluator.TorchEvaluator` on ``device`` (``"auto"``: a GPU if torch sees one,
    else numba)."""
    if device == "cpu":
        return None
    import copy

    import torch

    if device == "auto" and not torch.cuda.is_available():
        return None
    return TorchEvaluator(copy.deepcopy(az.ppo.policy), "cuda" if device == "auto" else device)


def play_games_batched(
    az: Any,
    games: list[tuple[int, int, tuple[int, int, int]]],
    modules: tuple[str, ...],
    selfplay: dict[str, Any],
    evaluator: Any = None,
    at_once: int = MAX_GAMES_AT_ONCE,
    lane_trees: int = LANE_TREES,
) -> dict[int, tuple[Positions, dict[str, Any]]]:
    """Self-play games ``(index, players, seeds)`` of ``az`` (an ``AZAgent`` with a fixed network) in
    every seat, ``at_once`` at a time; ``{index: (positions, record)}``.

    Each round, every game plays its forced moves up to its next searched decision, the roots of
    all games are searched together, and each game records its decision and plays its move.
    """
    sp = selfplay
    pending = list(games)
    pending.reverse()  # pop() takes them in order
    slots = max(1, min(at_once, len(games)))
    live: list[_Game] = []
    out: dict[int, tuple[Positions, dict[str, Any]]] = {}
    params: dict[int, tuple[float, float, float]] = {}
    search: BatchedSearch | None = None
    while pending or live:
        while pending and len(live) < slots:
            g, n, seeds = pending.pop()
            live.append(_start(g, n, modules, seeds, sp))
        for game in live:
            if game.waiting is None:
                _advance(game)
        for game in [gm for gm in live if gm.waiting is None]:  # ended
            out[game.index] = _finish(game)
        live = [gm for gm in live if gm.waiting is not None]
        if not live:
            continue
        if search is None:
            n0 = live[0].num_players
            net = az.network(n0, modules)
            p = az.search_params(net, n0)
            if p["ms"] > 0:
                raise ValueError("batched self-play needs a simulation budget (sims), not a time budget (ms)")
            search = BatchedSearch(
                net.weights, slots, int(p["sims"]), int(p["batch"]), evaluator, lane_trees=lane_trees
            )
        for game in live:
            n = game.num_players
            if n not in params:
                p = az.search_params(az.network(n, modules), n)
                if int(p["sims"]) != search.sims or int(p["batch"]) != search.batch:
                    raise ValueError(
                        "batched self-play needs one simulation budget and batch for every player count"
                    )
                params[n] = (float(p["c"]), float(p["fpu"]), float(p["ptemp"]))
        gumbel = [gm for gm in live if gm.waiting[6] is not None]
        puct = [gm for gm in live if gm.waiting[6] is None]
        if gumbel:
            roots, seeds, c, fpu, ptemp = _search_inputs(gumbel, params)
            noise = [gm.waiting[6] for gm in gumbel]
            actions = int(sp.get("gumbel_actions", 16))
            moves, policies, root_values = search.gumbel_search(roots, seeds, c, fpu, ptemp, noise, actions)
            for t, game in enumerate(gumbel):
                game.since = None  # its tree is not kept (nor any other's: the trees were Gumbel's)
                _play(game, _record_gumbel(game, moves[t], policies[t], float(root_values[t])))
        if puct:
            roots, seeds, c, fpu, ptemp = _search_inputs(puct, params)
            cheap = int(sp.get("cheap_sims", search.sims))
            sims = np.array([search.sims if gm.waiting[5][0] else cheap for gm in puct], dtype=np.int64)
            keep = [_kept(gm) if sp.get("reuse", False) and not gumbel else None for gm in puct]
            counts, root_values = search.search(roots, seeds, c, fpu, ptemp, sims, keep)
            for t, game in enumerate(puct):
                game.tree, game.last_root = t, game.waiting[3]
                move = _record(game, counts[t], float(root_values[t]))
                game.since = [move]
                _play(game, move)
    return out


def _kept(game: _Game) -> tuple[int, np.ndarray] | None:
    """``(its last tree, the moves since)`` when ``game``'s search may go on in its last tree's subtree
    (:func:`agents.subtree.same_information`, as ``AZAgent`` decides it on the per-game path)."""
    if game.since is None or game.tree < 0 or game.last_root is None:
        return None
    if not same_information(game.last_root, game.waiting[3]):
        return None
    return game.tree, np.array(game.since, dtype=np.int64)


def selfplay_job_batched(job: dict[str, Any]) -> dict[str, Any]:
    """:func:`training.search.selfplay.selfplay_job` with the job's self-play games played at once.

    The same job dict and the same result (``positions`` in :data:`training.search.replay.FIELDS`,
    ``records``, in job order). ``job["selfplay"]`` may add ``batched_device`` (``"cpu"``: numba, the
    per-game path's games bit for bit; ``"cuda"``, or ``"auto"`` when torch sees a GPU: the network
    in torch there), ``batched_games`` (games at once, default :data:`MAX_GAMES_AT_ONCE`) and
    ``batched_lane_trees`` (with torch: trees per lane, :class:`agents.search_batch.BatchedSearch`;
    default :data:`agents.search_batch.LANE_TREES`). Games with fixed opponents are played by the
    per-game path (module docstring).
    """
    import torch

    torch.set_num_threads(1)
    sp = job["selfplay"]
    az = cached_agent(job["network"], "az", 0, sims=sp["sims"], c=sp["c"], fpu=sp["fpu"], batch=sp["batch"])
    modules = tuple(job["modules"])
    counts = job["player_counts"]
    mine, theirs = [], []
    for g in job["games"]:
        n = counts[g % len(counts)]
        has_opponent = bool(sp["opponents"]) and (
            opponent_game(job["seed"], job["iteration"], g, n, sp["opponent_share"]) is not None
        )
        (theirs if has_opponent else mine).append((g, n, game_seeds(job["seed"], job["iteration"], g)))
    played = play_games_batched(
        az,
        mine,
        modules,
        sp,
        make_evaluator(az, sp.get("batched_device", "cpu")),
        int(sp.get("batched_games", MAX_GAMES_AT_ONCE)),
        int(sp.get("batched_lane_trees", LANE_TREES)),
    )
    results = {
        g: (data, {**record, "game": g, "positions": count(data), "search_seat": -1})
        for g, (data, record) in played.items()
    }
    if theirs:  # the per-game path, in job order
        part = selfplay_job({**job, "games": [g for g, _, _ in theirs]})
        start = 0
        for record in part["records"]:
            stop = start + record["positions"]
            results[record["game"]] = ({k: part["positions"][k][start:stop] for k in FIELDS}, record)
            start = stop
    ordered = [results[g] for g in job["games"]]
    return {"positions": concat([d for d, _ in ordered]), "records": [r for _, r in ordered]}


__all__ = ["MAX_GAMES_AT_ONCE", "make_evaluator", "play_games_batched", "selfplay_job_batched"]
