"""Self-play data for expert iteration: games played by ``az`` that record the search's visit counts.

Why a recorder around :class:`agents.az.AZAgent` and not a new game loop: the
games go through :func:`agents.runner.play_game` (the one runner: deal, seat
order, :func:`~agents.runner.decision_state` determinisation), and the search
is ``AZAgent.root_visits`` (the one search core); this module only decides
which move to play from the counts and writes down, for every decision with a
choice, the observation of the seat on move, its legal mask and the visit
distribution over the legal ids (the policy target). When the game ends each
seat's :func:`splendor_env.rules.terminal_rewards` becomes the value target of
that seat's positions (what :func:`agents.net.seat_values` expects of the
critic: each seat's own result).

Opponents: with ``selfplay.opponents`` and ``opponent_share`` set, that share
of the games seat the search in one seat and a fixed agent (such as
``greedy``) in the others (:func:`opponent_game`); only the search's seats are
recorded. Why: pure self-play teaches the network positions between equals;
the games a user scores it on are against other agents, whose positions and
results it then sees too.

Seeds: game ``g`` of iteration ``i`` is dealt, searched and sampled from
seeds derived from ``(config seed, i, g)`` only (:func:`game_seeds`), as is
whether it has an opponent and where the search sits, so the records do not
depend on the backend, the number of workers or how the games are cut into
jobs.

A game's positions come out in the one form the buffer and the training batches
share (:data:`training.search.replay.Positions`); networks come in as the bytes
of their ``.zip`` (:mod:`training.search.network`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent
from agents.runner import play_game
from splendor_env.env import raw_env
from splendor_env.rules import terminal_rewards
from splendor_env.state import CURRENT, MAX_PLAYERS, MAX_TURNS, N_PLAYERS, P_PRESTIGE, TURN, player_offset
from training.common.jobs import job_seed
from training.search.network import cached_agent
from training.search.replay import Positions, concat, count, empty_positions

# ---------------------------------------------------------------------------
# One self-play game


def game_seeds(seed: int, iteration: int, game: int) -> tuple[int, int, int]:
    """(deal, search, determinisation-and-sampling) seeds of game ``game`` of ``iteration``."""
    return tuple(job_seed(seed, iteration, game, k) for k in range(3))  # type: ignore[return-value]


def opponent_game(seed: int, iteration: int, game: int, num_players: int, share: float) -> int | None:
    """The seat of the search in game ``game`` when it plays the fixed opponents, else ``None``.

    A game has opponents with probability ``share``, drawn from ``(seed, iteration, game)``
    alone (not from ``game``'s parity, which already alternates the player counts).
    """
    if share <= 0:
        return None
    draw = job_seed(seed, iteration, game, 3)
    if (draw % 1_000_000) / 1_000_000 >= share:
        return None
    return int(job_seed(seed, iteration, game, 4) % num_players)


def visit_target(counts: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The policy target: root visit counts over the legal ids, summing to 1 (zero elsewhere).

    ``AZAgent.root_visits`` adds a tie-break below 1 to each count, so the integer part is the
    number of visits. With no visit at all (a 1-simulation search) the most valued move gets 1.
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


class SearchRecorder(Agent):
    """The self-play seat: ``az``'s search picks the move, every decision with a choice is recorded.

    A decision is written down field by field (:attr:`seen`) until the game's end gives its result:
    :meth:`positions` then turns the game into :data:`~training.search.replay.Positions`.

    The options of ``selfplay`` past the temperatures, each off by default (docs/training.md):
    ``full_share`` < 1 searches a decision with the full budget with that probability, else with
    ``cheap_sims`` simulations, played greedily and not recorded (playout-cap randomisation);
    ``root="gumbel"`` runs Gumbel AlphaZero's root on the full searches
    (``AZAgent.gumbel_search``, ``gumbel_actions`` sampled moves); ``record_share`` < 1 records
    that share of the full-search decisions. Their draws come from streams of the game's sampling
    seed (:meth:`begin`), one draw per searched decision, so a game's records do not depend on how
    the games are cut into jobs or played (one at a time or batched).
    """

    name = "az-selfplay"
    needs_state = True

    def __init__(
        self,
        az: Any,
        sample_moves: int,
        temperature: float,
        target_temperature: float = 1.0,
        full_share: float = 1.0,
        cheap_sims: int = 16,
        record_share: float = 1.0,
        root: str = "puct",
        gumbel_actions: int = 16,
        reuse: bool = False,
    ) -> None:
        super().__init__(0)
        self.az, self.sample_moves, self.temperature = az, sample_moves, temperature
        self.target_temperature = target_temperature
        self.full_share, self.cheap_sims, self.record_share = full_share, cheap_sims, record_share
        self.root, self.gumbel_actions = root, gumbel_actions
        self.reuse = reuse
        self.every_seat = True  # it plays every seat of the game (play_selfplay_game says)
        self.streams(0)
        self.forget()

    def begin(self, search_seed: int, sample_seed: int) -> None:
        """A new game: reseed the search and the sampling, forget the last game's decisions."""
        self.az.seed(search_seed)
        self.seed(sample_seed)
        self.streams(sample_seed)
        self.forget()

    def streams(self, sample_seed: int) -> None:
        """The game's draws of full or cheap search and of recorded or not (apart from the move
        sampling's, which they must not shift: with the defaults they draw nothing)."""
        self.cap_rng = np.random.default_rng([sample_seed, 1])
        self.record_rng = np.random.default_rng([sample_seed, 2])

    def forget(self) -> None:
        """No decision recorded yet."""
        self.seen: dict[str, list[Any]] = {
            k: [] for k in ("obs", "mask", "policy", "seat", "decision", "q", "turn")
        }
        self.turn = 0  # the game's turn at the decision being searched (set before note)
        self.decisions = 0
        # the moves played since the last PUCT search (None: none yet, or not every seat is this recorder's)
        self.since: list[int] | None = None

    def plan(self) -> tuple[bool, bool]:
        """``(full search, recorded)`` of the next searched decision: a cheap search is never recorded."""
        full = self.full_share >= 1.0 or bool(self.cap_rng.random() < self.full_share)
        keep = self.record_share >= 1.0 or bool(self.record_rng.random() < self.record_share)
        return full, full and keep

    def note(
        self, observation: np.ndarray, mask: np.ndarray, index: int, seat: int, policy: np.ndarray, q: float
    ) -> None:
        """Write down one decision: what the seat saw, its legal ids, the policy target and the search's value."""
        seen = self.seen
        seen["obs"].append(np.array(observation, np.float32))
        seen["mask"].append(np.asarray(mask) != 0)
        seen["policy"].append(policy)
        seen["seat"].append(seat)
        seen["decision"].append(index)
        seen["q"].append(q)
        seen["turn"].append(self.turn)

    def respond(
        self,
        observation: np.ndarray,
        mask: np.ndarray,
        index: int,
        seat: int,
        counts: np.ndarray,
        root_value: float,
        plan: tuple[bool, bool] = (True, True),
    ) -> int:
        """The move from a PUCT search's ``counts`` (recording the decision if ``plan`` says so): sampled
        in the opening of a full search, else the most visited."""
        full, keep = plan
        target = visit_target(counts, mask)
        if keep:
            self.note(observation, mask, index, seat, sharpen(target, self.target_temperature), root_value)
        return choose_move(counts, target, full and index < self.sample_moves, self.temperature, self.rng)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        assert state is not None
        index, self.decisions = self.decisions, self.decisions + 1
        self.turn = int(state[TURN])
        legal = np.flatnonzero(action_mask)
        if legal.size == 1:  # a forced move teaches the policy nothing
            if self.since is not None:
                self.since.append(int(legal[0]))
            return int(legal[0])
        plan = self.plan()
        seat = int(state[CURRENT])
        if plan[0] and self.root == "gumbel":  # its move is its own choice: Gumbel noise explores
            move, policy = self.az.gumbel_search(state, self.gumbel_actions)
            if plan[1]:
                self.note(observation, action_mask, index, seat, policy, self.az.root_value)
            self.since = None
            return move
        after = self.since if self.reuse else None
        counts = self.az.root_visits(state, sims=None if plan[0] else self.cheap_sims, after=after)
        move = self.respond(observation, action_mask, index, seat, counts, self.az.root_value, plan)
        self.since = [move] if self.every_seat else None
        return move

    def positions(
        self, rewards: np.ndarray, obs_dim: int, num_actions: int, final: np.ndarray | None = None
    ) -> Positions:
        """The game's recorded decisions, each valued by its seat's result in ``rewards``.

        ``phase`` is a decision's index over the decisions played (0 = the first), the recorder's
        own moves only when it plays one seat.
        """
        seen = self.seen
        data = empty_positions(len(seen["seat"]), obs_dim, num_actions)
        if seen["seat"]:
            seats = np.array(seen["seat"])
            data["obs"][:] = seen["obs"]
            data["mask"][:] = seen["mask"]
            data["policy"][:] = seen["policy"]
            data["value"][:] = rewards[seats]
            data["q"][:] = seen["q"]
            data["seat"][:] = seats
            data["phase"][:] = np.array(seen["decision"]) / max(1, self.decisions)
            if final is not None:
                data["margin"][:], data["moves_left"][:] = aux_targets(final, seats, np.array(seen["turn"]))
        return data


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


def make_recorder(az: Any, selfplay: dict[str, Any]) -> SearchRecorder:
    """The recorder of a job's ``selfplay`` section (options a job dict from an older run lacks are off)."""
    sp = selfplay
    return SearchRecorder(
        az,
        sp["sample_moves"],
        sp["temperature"],
        sp["target_temperature"],
        full_share=sp.get("full_share", 1.0),
        cheap_sims=sp.get("cheap_sims", 16),
        record_share=sp.get("record_share", 1.0),
        root=sp.get("root", "puct"),
        gumbel_actions=sp.get("gumbel_actions", 16),
        reuse=sp.get("reuse", False),
    )


def play_selfplay_game(
    recorder: SearchRecorder,
    num_players: int,
    modules: tuple[str, ...],
    max_turns: int,
    seeds: tuple[int, int, int],
    opponent: tuple[list[Agent], str, int] | None = None,
) -> tuple[Positions, dict[str, Any]]:
    """One game of ``recorder`` in every seat: its positions and its record.

    With ``opponent = (agents, label, seat)``, ``recorder`` plays seat ``seat`` only and
    ``agents[p]`` (reseeded from the game's seeds) every other seat ``p``; only ``seat`` is
    recorded (a game cut short before its first choice records nothing).

    ``q`` is the search's own value of the position for the seat on move
    (``AZAgent.root_value``), a second, less noisy value target (``train.search_value_weight``).
    """
    deal, search, sample = seeds
    recorder.begin(search, sample)
    recorder.every_seat = opponent is None  # with opponents it does not see their moves
    env = raw_env(num_players=num_players, modules=modules, max_turns=max_turns)
    seats: list[Agent] = [recorder] * num_players
    labels = ["az"] * num_players
    if opponent is not None:
        agents, label, mine = opponent
        seats = [recorder if p == mine else agents[p] for p in range(num_players)]
        for p in range(num_players):
            if p != mine:
                agents[p].seed(sample + 2 + p)
        labels = ["az" if p == mine else label for p in range(num_players)]
    record = play_game(seats, deal, env=env, rng=np.random.default_rng(sample + 1), labels=labels)
    rewards = np.zeros(MAX_PLAYERS)
    terminal_rewards(env.game_state, rewards)
    space = env.observation_space(env.possible_agents[0])
    shape = space["observation"].shape[0], space["action_mask"].shape[0]
    return recorder.positions(rewards, *shape, env.game_state), record


# ---------------------------------------------------------------------------
# Jobs (module-level functions: picklable for worker processes and Ray)


def selfplay_job(job: dict[str, Any]) -> dict[str, Any]:
    """Play the games ``job["games"]`` of one iteration; returns their ``positions`` and ``records``."""
    import torch

    torch.set_num_threads(1)
    from agents import build

    sp = job["selfplay"]
    az = cached_agent(job["network"], "az", 0, sims=sp["sims"], c=sp["c"], fpu=sp["fpu"], batch=sp["batch"])
    recorder = make_recorder(az, sp)
    # one agent per seat and spec: an agent may keep state between its own moves
    most = max(job["player_counts"])
    opponents = {spec: [build(spec, seed=0) for _ in range(most)] for spec in sp["opponents"]}
    parts, records = [], []
    for g in job["games"]:
        n = job["player_counts"][g % len(job["player_counts"])]
        seeds = game_seeds(job["seed"], job["iteration"], g)
        seat = opponent_game(job["seed"], job["iteration"], g, n, sp["opponent_share"]) if opponents else None
        opponent = None
        if seat is not None:
            spec = sp["opponents"][job_seed(job["seed"], job["iteration"], g, 5) % len(opponents)]
            opponent = (opponents[spec], spec, seat)
        data, record = play_selfplay_game(
            recorder, n, tuple(job["modules"]), sp["max_turns"], seeds, opponent
        )
        parts.append(data)
        records.append(
            {**record, "game": g, "positions": count(data), "search_seat": -1 if seat is None else seat}
        )
    return {"positions": concat(parts), "records": records}


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
