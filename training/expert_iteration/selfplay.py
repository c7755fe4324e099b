"""Self-play for expert iteration: games of ``az`` that record the search's visit counts.

Why one driver: every game waiting for a search hands its root to one
:class:`agents.search.driver.Search` (the search ``az`` plays with), which searches the roots in step;
a game at a time is one root. With the numba network the games are the same bit for bit however many
are played at once; with torch (``selfplay.batched_device``) they are close, not identical.

What a game records: for every decision with a choice, the observation of the seat on move, its legal
mask and the policy target (the visit distribution over the legal ids, sharpened by
``target_temperature``; with ``root: gumbel`` Gumbel's completed-Q target); when the game ends each
seat's :func:`splendor_env.rules.terminal_rewards` becomes the value target of its positions (what
:func:`agents.nets.numba_net.seat_values` expects of the critic). The options (each off by default:
docs/training.md) are read from the ``selfplay`` section as the config defines them.

Seeds: game ``g`` of iteration ``i`` is dealt, searched and sampled from seeds derived from
``(config seed, i, g)`` only (:func:`game_seeds`), as is whether it has opponents and where the search
sits, so the records depend neither on the backend nor on how the games are cut into jobs. A game keeps
the runner's streams (:func:`agents.runner.decision_state` determinisations from its own generator).

Opponents: with ``selfplay.opponents`` and ``opponent_share``, that share of the games seat the search
in one seat and a fixed agent in the others; only the search's seats are recorded. Those games are
played one at a time: their agents are shared by a job's games and reseeded per game, so playing them
interleaved would interleave the agents' random streams.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from agents.base import Agent
from agents.nets.torch_evaluator import TorchEvaluator
from agents.runner import decide, decision_state
from agents.search.driver import LANE_TREES, Search
from agents.search.subtree import same_information
from splendor_env import state as st
from splendor_env.env import raw_env
from splendor_env.records import game_record, seat_of
from splendor_env.rules import terminal_rewards
from splendor_env.state import CURRENT, MAX_PLAYERS, MAX_TURNS, N_PLAYERS, P_PRESTIGE, TURN, player_offset
from training.common.jobs import job_seed
from training.expert_iteration.network import cached_agent
from training.expert_iteration.replay import Positions, concat, count, empty_positions

RECORDED = ("obs", "mask", "policy", "seat", "decision", "q", "turn")


def game_seeds(seed: int, iteration: int, game: int) -> tuple[int, int, int]:
    """(deal, search, determinisation-and-sampling) seeds of game ``game`` of ``iteration``."""
    return tuple(job_seed(seed, iteration, game, k) for k in range(3))  # type: ignore[return-value]


def opponent_game(seed: int, iteration: int, game: int, num_players: int, share: float) -> int | None:
    """The seat of the search in game ``game`` when it plays the fixed opponents, else ``None``: a game
    has opponents with probability ``share``, drawn from ``(seed, iteration, game)`` alone."""
    if share <= 0:
        return None
    draw = job_seed(seed, iteration, game, 3)
    if (draw % 1_000_000) / 1_000_000 >= share:
        return None
    return int(job_seed(seed, iteration, game, 4) % num_players)


def opponent_spec(specs: list[str], seed: int, iteration: int, game: int) -> str:
    """The fixed opponent of game ``game`` when it has them: one of ``selfplay.opponents``, drawn from
    ``(seed, iteration, game)`` alone. A spec listed twice is drawn twice as often (drawn among the
    distinct specs, a repeated one left the last specs of the list never playing)."""
    return specs[job_seed(seed, iteration, game, 5) % len(specs)]


def visit_target(counts: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The policy target: root visit counts over the legal ids, summing to 1 (zero elsewhere).

    The search adds a tie-break below 1 to each count, so the integer part is the number of visits.
    With no visit at all (a 1-simulation search) the most valued move gets 1.
    """
    legal = np.asarray(mask) != 0
    visits = np.where(legal, np.floor(counts), 0.0)
    total = visits.sum()
    if total <= 0:
        visits = np.zeros_like(visits)
        visits[int(np.argmax(np.where(legal, counts, -np.inf)))] = 1.0
        total = 1.0
    return (visits / total).astype(np.float32)


def sharpen(target: np.ndarray, temperature: float) -> np.ndarray:
    """``target ** (1 / temperature)``, renormalised: the policy target recorded for training.

    Why: at a hundred simulations the visits are spread by exploration (a prior trained on them
    flattens, and the next search explores more still); a temperature below 1 keeps the prior
    as sharp as the search's choice.
    """
    if temperature == 1.0:
        return target
    p = target.astype(np.float64) ** (1.0 / temperature)
    return (p / p.sum()).astype(np.float32)


def choose_move(
    counts: np.ndarray, target: np.ndarray, sample: bool, temperature: float, rng: np.random.Generator
) -> int:
    """Sample from ``target ** (1 / temperature)`` (the opening, so games differ) or play the most visited."""
    if sample:
        p = target.astype(np.float64) ** (1.0 / temperature)
        return int(rng.choice(p.size, p=p / p.sum()))
    return int(np.argmax(np.where(target > 0, counts, -1.0)))


def aux_targets(final: np.ndarray, seats: np.ndarray, turns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The auxiliary value targets of positions of seats ``seats`` at turns ``turns`` of the game
    that ended in state ``final``: each seat's prestige margin (its prestige minus the best other
    seat's, / 15) and the player turns left (/ the turn cap). Why: one result per game is a coarse
    target for the critic; by how much and how soon a game ends tell positions apart within it.
    """
    n = int(final[N_PLAYERS])
    prestige = np.array([final[player_offset(p) + P_PRESTIGE] for p in range(n)], np.float32)
    best_other = np.array([np.delete(prestige, p).max() for p in range(n)], np.float32)
    margin = (prestige - best_other)[seats] / 15.0
    left = (int(final[TURN]) - turns) / max(1, int(final[MAX_TURNS]))
    return margin.astype(np.float32), left.astype(np.float32)


@dataclass
class Waiting:
    """A decision waiting for its search: what the seat saw, the root, the search seed and the plan."""

    obs: np.ndarray
    mask: np.ndarray
    index: int  # the decision's index over the game's recorded seats' decisions
    root: np.ndarray  # the state determinised for the seat on move
    seed: int
    full: bool  # a full search (else cheap_sims, played greedily and not recorded)
    recorded: bool
    noise: np.ndarray | None  # Gumbel's draw for a full search with root: gumbel, else None


@dataclass
class Game:
    """One self-play game in play: its env, its random streams, its decisions and its search's tree."""

    needs_state: ClassVar[bool] = True  # the runner determinises the searched seat's state (decision_state)

    index: int
    seeds: tuple[int, int, int]
    env: raw_env
    sp: dict[str, Any]
    opponents: list[Agent] | None = None  # the agent of every seat but ``seat`` (None: az in every seat)
    seat: int = -1
    label: str = "az"
    actions: list[int] = field(default_factory=list)
    seen: dict[str, list[Any]] = field(default_factory=lambda: {k: [] for k in RECORDED})
    decisions: int = 0
    since: list[int] | None = None  # selfplay.reuse: the moves since the last PUCT search (None: none)
    tree: int = -1  # that search's tree and root
    last_root: np.ndarray | None = None
    waiting: Waiting | None = None

    def __post_init__(self) -> None:
        deal, search, sample = self.seeds
        self.env.reset(seed=deal)
        self.rng = np.random.default_rng(sample + 1)  # the determinisations (the runner's stream)
        self.search_rng = np.random.default_rng(search)  # the search seeds and Gumbel's noise
        self.move_rng = np.random.default_rng(sample)  # the opening's move sampling
        self.cap_rng = np.random.default_rng([sample, 1])  # full or cheap search
        self.record_rng = np.random.default_rng([sample, 2])  # recorded or not

    def start(self) -> None:
        """Seed the opponents for this game, as it starts: a job's games share their agents, so seeding
        them when the game is built would leave every game the streams of the last one built."""
        for p, agent in enumerate(self.opponents or []):
            if p != self.seat:
                agent.seed(self.seeds[2] + 2 + p)

    def over(self) -> bool:
        return int(self.env.game_state[st.PHASE]) in (st.PHASE_GAME_OVER, st.PHASE_TRUNCATED)

    def play(self, action: int) -> None:
        self.env.step(action)
        self.actions.append(action)
        if self.since is not None:
            self.since.append(action)

    def advance(self) -> None:
        """Play forced moves and the opponents' moves until the game needs a search (``waiting``) or ends."""
        env = self.env
        while not self.over():
            seat = seat_of(env.agent_selection)
            if self.opponents is not None and seat != self.seat:
                self.play(decide(self.opponents[seat], env, self.rng))
                continue
            view = env.observe(env.agent_selection)
            state = decision_state(Game, env.game_state, seat, self.rng)
            index, self.decisions = self.decisions, self.decisions + 1
            legal = np.flatnonzero(view["action_mask"])
            if legal.size == 1:  # a forced move teaches the policy nothing
                self.play(int(legal[0]))
                continue
            seed = int(self.search_rng.integers(0, 2**63))
            full = self.sp["full_share"] >= 1.0 or bool(self.cap_rng.random() < self.sp["full_share"])
            keep = self.sp["record_share"] >= 1.0 or bool(self.record_rng.random() < self.sp["record_share"])
            gumbel = full and self.sp["root"] == "gumbel"
            noise = self.search_rng.gumbel(size=legal.size) if gumbel else None
            self.waiting = Waiting(
                view["observation"], view["action_mask"], index, state, seed, full, full and keep, noise
            )
            return

    def searched(self, counts: np.ndarray, root_value: float, tree: int) -> None:
        """A PUCT search's ``counts`` in tree ``tree``: the move (sampled in the opening of a full search,
        else the most visited) and the visits as the policy target (:meth:`decided`)."""
        w = self.waiting
        assert w is not None
        target = visit_target(counts, w.mask)
        sample = w.full and w.index < self.sp["sample_moves"]
        move = choose_move(counts, target, sample, self.sp["temperature"], self.move_rng)
        self.decided(move, sharpen(target, self.sp["target_temperature"]), root_value, tree)

    def decided(self, move: int, policy: np.ndarray, q: float, tree: int = -1) -> None:
        """Write down the waiting decision if planned (its policy target and the search's value ``q``),
        play ``move``; ``tree >= 0``: the PUCT tree the next search may go on in (Gumbel's are not kept)."""
        w = self.waiting
        assert w is not None
        if w.recorded:
            row = (
                np.array(w.obs, np.float32),
                np.asarray(w.mask) != 0,
                policy,
                int(w.root[CURRENT]),
                w.index,
                q,
            )
            for key, value in zip(RECORDED, (*row, int(w.root[TURN])), strict=True):
                self.seen[key].append(value)
        self.tree, self.last_root, self.waiting = tree, w.root, None
        self.since = [] if tree >= 0 and self.opponents is None and self.sp["reuse"] else None
        self.play(move)

    def kept(self) -> tuple[int, np.ndarray] | None:
        """``(its last tree, the moves since)`` when the search may go on in its last tree's subtree."""
        w = self.waiting
        if (
            self.since is None
            or self.last_root is None
            or w is None
            or not same_information(self.last_root, w.root)
        ):
            return None
        return self.tree, np.array(self.since, dtype=np.int64)

    def finish(self) -> tuple[Positions, dict[str, Any]]:
        """The game's positions (each valued by its seat's result) and its record."""
        env, seen = self.env, self.seen
        n = len(env.possible_agents)
        labels = ["az" if self.opponents is None or p == self.seat else self.label for p in range(n)]
        record = game_record(env, self.seeds[0], labels, self.actions)
        rewards = np.zeros(MAX_PLAYERS)
        terminal_rewards(env.game_state, rewards)
        space = env.observation_space(env.possible_agents[0])
        data = empty_positions(
            len(seen["seat"]), space["observation"].shape[0], space["action_mask"].shape[0]
        )
        if seen["seat"]:
            seats = np.array(seen["seat"])
            for key in ("obs", "mask", "policy", "q"):
                data[key][:] = seen[key]
            data["value"][:] = rewards[seats]
            data["seat"][:] = seats
            data["phase"][:] = np.array(seen["decision"]) / max(1, self.decisions)
            data["margin"][:], data["moves_left"][:] = aux_targets(
                env.game_state, seats, np.array(seen["turn"])
            )
        return data, {**record, "game": self.index, "positions": count(data), "search_seat": self.seat}


def make_evaluator(az: Any, device: str) -> Any:
    """``None`` (numba on this core) for ``device="cpu"``; else a :class:`TorchEvaluator` on ``device``
    (``"auto"``: a GPU if torch sees one, else numba)."""
    if device == "cpu":
        return None
    import copy

    import torch

    if device == "auto" and not torch.cuda.is_available():
        return None
    return TorchEvaluator(copy.deepcopy(az.ppo.policy), "cuda" if device == "auto" else device)


def _params(games: list[Game], params: dict[int, tuple[float, ...]]) -> tuple[np.ndarray, ...]:
    """The waiting roots of ``games``, their search seeds and ``(c, fpu, ptemp)`` arrays."""
    roots = np.array([g.waiting.root for g in games], dtype=np.int32)
    seeds = np.array([g.waiting.seed for g in games], dtype=np.uint64)
    n = [len(g.env.possible_agents) for g in games]
    return roots, seeds, tuple(np.array([params[k][i] for k in n]) for i in range(3))


def play_games(
    az: Any,
    games: list[Game],
    evaluator: Any = None,
    at_once: int = 1,
    lane_trees: int = LANE_TREES,
) -> dict[int, tuple[Positions, dict[str, Any]]]:
    """Play ``games`` (``az`` with a fixed network searching), ``at_once`` at a time; ``{index: (positions, record)}``.

    Each round every game plays up to its next searched decision, the waiting roots are searched
    together, and each game records its decision and plays its move.
    """
    if not games:
        return {}
    params: dict[int, tuple[float, ...]] = {}  # player count -> (c, fpu, ptemp)
    budgets, nets = set(), {}
    for game in games:
        n = len(game.env.possible_agents)
        if n not in params:
            net = az.network(n, game.env.config.modules)
            nets[net.label] = net
            p = az.search_params(net, n)
            params[n] = (float(p["c"]), float(p["fpu"]), float(p["ptemp"]))
            budgets.add((int(p["sims"]), int(p["batch"]), float(p["ms"])))
    if len(budgets) > 1 or min(budgets)[2] > 0:
        raise ValueError(
            "self-play needs one simulation budget (sims, not ms) and batch for every player count"
        )
    if len(nets) > 1:  # one Search evaluates every root with one network's weights
        raise ValueError(f"self-play searches with one network; these games need {sorted(nets)}")
    sims, batch, _ = budgets.pop()
    search = Search(net.weights, max(1, min(at_once, len(games))), sims + 1, batch, evaluator, lane_trees)
    pending, live = list(reversed(games)), []  # pop() takes them in order
    out: dict[int, tuple[Positions, dict[str, Any]]] = {}
    while pending or live:
        while pending and len(live) < search.trees.trees:
            live.append(pending.pop())
            live[-1].start()
        for game in live:
            if game.waiting is None:
                game.advance()
        out.update({game.index: game.finish() for game in live if game.waiting is None})  # ended
        live = [g for g in live if g.waiting is not None]
        gumbel = [g for g in live if g.waiting.noise is not None]
        puct = [g for g in live if g.waiting.noise is None]
        if gumbel:
            roots, seeds, prm = _params(gumbel, params)
            noise = [g.waiting.noise for g in gumbel]
            moves, policies, values = search.gumbel_search(
                roots, seeds, prm, sims, noise, live[0].sp["gumbel_actions"]
            )
            for t, game in enumerate(gumbel):
                game.decided(moves[t], policies[t], float(values[t]))
        if puct:
            roots, seeds, prm = _params(puct, params)
            budget = np.array(
                [sims if g.waiting.full else min(g.sp["cheap_sims"], sims) for g in puct], np.int64
            )
            keep = None if gumbel else [g.kept() for g in puct]  # Gumbel's search used the trees
            counts, values = search.search(roots, seeds, prm, budget, keep)
            for t, game in enumerate(puct):
                game.searched(counts[t], float(values[t]), t)
    return out


def play_selfplay_game(
    az: Any,
    selfplay: dict[str, Any],
    num_players: int,
    modules: tuple[str, ...],
    seeds: tuple[int, int, int],
    opponent: tuple[list[Agent], str, int] | None = None,
) -> tuple[Positions, dict[str, Any]]:
    """One game of ``az`` in every seat (options: a ``selfplay`` section), its positions and record; with
    ``opponent = (agents, label, seat)`` ``az`` plays ``seat`` only and ``agents[p]`` every other seat."""
    env = raw_env(num_players=num_players, modules=tuple(modules), max_turns=selfplay["max_turns"])
    agents, label, seat = opponent if opponent is not None else (None, "az", -1)
    return play_games(az, [Game(0, seeds, env, selfplay, agents, seat, label)])[0]


def selfplay_job(job: dict[str, Any]) -> dict[str, Any]:
    """Play the games ``job["games"]`` of one iteration; returns their ``positions`` and ``records`` in
    job order. The games without opponents are searched in step, ``batched_games`` at once (the same
    games as one at a time, with less Python a move); ``selfplay.batched`` sends their leaves to the
    network on ``batched_device`` (torch: a GPU), else numba evaluates them on this core."""
    import torch

    from agents import build

    torch.set_num_threads(1)
    sp = job["selfplay"]
    az = cached_agent(job["network"], "az", 0, sims=sp["sims"], c=sp["c"], fpu=sp["fpu"], batch=sp["batch"])
    modules = tuple(job["modules"])
    counts = job["player_counts"]
    most = max(counts)
    # one agent per seat and spec, shared by the job's games with opponents (an agent may keep state between moves)
    opponents = {spec: [build(spec, seed=0) for _ in range(most)] for spec in sp["opponents"]}
    alone, versus = [], []
    for g in job["games"]:
        n = counts[g % len(counts)]
        env = raw_env(num_players=n, modules=modules, max_turns=sp["max_turns"])
        seeds = game_seeds(job["seed"], job["iteration"], g)
        seat = opponent_game(job["seed"], job["iteration"], g, n, sp["opponent_share"]) if opponents else None
        if seat is None:
            alone.append(Game(g, seeds, env, sp))
        else:
            spec = opponent_spec(sp["opponents"], job["seed"], job["iteration"], g)
            versus.append(Game(g, seeds, env, sp, opponents[spec], seat, spec))
    evaluator = make_evaluator(az, sp["batched_device"]) if sp["batched"] else None
    played = play_games(az, alone, evaluator, sp["batched_games"], sp["batched_lane_trees"])
    played.update(play_games(az, versus))  # one at a time, in job order (module docstring)
    ordered = [played[g] for g in job["games"]]
    return {"positions": concat([d for d, _ in ordered]), "records": [r for _, r in ordered]}


def selfplay_jobs(
    network: bytes,
    iteration: int,
    seed: int,
    games: int,
    per_job: int,
    player_counts: list[int],
    modules: tuple[str, ...],
    selfplay: dict[str, Any],
) -> list[dict[str, Any]]:
    """The iteration's games cut into jobs of ``per_job`` consecutive game indices."""
    return [
        {
            "network": network,
            "iteration": iteration,
            "seed": seed,
            "games": list(range(first, min(games, first + per_job))),
            "player_counts": list(player_counts),
            "modules": list(modules),
            "selfplay": selfplay,
        }
        for first in range(0, games, per_job)
    ]
