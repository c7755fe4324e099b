"""PUCT search guided by a trained network (spec ``az[:MODEL][,key=value...]``), every game a network covers.

Why: a PPO policy alone (``ppo:ppo_2p``) plays its first impression; a search that uses its
policy as the prior and its critic as the leaf value looks ahead where the network is unsure
(the AlphaZero recipe, without new training). It is the shared search core
(:mod:`agents.search.tree`) with the network evaluator (:mod:`agents.nets.numba_net`); which network plays
which game, its options and budget: docs/agents.md ("One search core"). Options: :data:`PARAMS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent, search_inputs
from agents.nets.numba_net import check_export, export_network, num_actions_of, observation_size
from agents.options import parse_options, typed_options
from agents.search.driver import Search
from agents.search.subtree import same_information
from agents.search.tree import Tree
from splendor_env import rules
from splendor_env import state as st
from splendor_env.deal import new_state

#: The default ``sims`` by player count. Why more with 3 or 4: a round has one ply per seat, so a
#: tree of the same size sees fewer of the searching seat's own turns, and the 3-player results
#: gain from the extra simulations (``az_3_4p`` against two ``greedy``: 83.8% at 1000, 85.7% at
#: 2000; the models page). ``stop`` spares most of their cost.
DEFAULT_SIMS = {2: 1000, 3: 2000, 4: 2000}

#: name -> (type, default, help) for every option of the ``az`` spec.
PARAMS: dict[str, tuple[type, object, str]] = {
    "sims": (
        int,
        DEFAULT_SIMS[2],
        "simulations per move (> 0), the budget unless ms is given; default 1000 with 2 players, 2000 with 3 or 4",
    ),
    "ms": (float, 0.0, "time budget in milliseconds per move (> 0 replaces sims; 0 = off)"),
    "max_ms": (
        float,
        0.0,
        "cap in milliseconds on a sims search: a move stops at its sims or at max_ms, whichever comes first (0 = no cap; not with ms)",
    ),
    "c": (float, 1.5, "PUCT exploration constant (>= 0)"),
    "fpu": (float, 0.2, "first-play urgency reduction: an unvisited child counts Q(parent) - fpu (>= 0)"),
    "batch": (int, 8, "leaves evaluated together per network call (1..64)"),
    "ptemp": (float, 1.0, "temperature of the prior softmax (> 0)"),
    "stop": (
        float,
        1.0,
        "end a move's search once its most-visited move leads the next by more than stop x the simulations "
        "left (0..1; 1: only when it can no longer be overtaken, so the same move with fewer simulations; "
        "0: never); not with ms",
    ),
    "gumbel": (
        int,
        0,
        "Gumbel AlphaZero's root over this many sampled moves (>= 2; 0 = PUCT's root): sequential halving "
        "spends the sims on them and never stops early; not with ms, max_ms or stop",
    ),
}


#: The options a shipped network's metadata may set (``"az"`` in its ``NAME.json``, read by
#: :func:`agents.nets.shipped.search_options`): they say how to read that network's outputs (how flat
#: its prior is, how far to trust its values), so they travel with it. An option given in the spec
#: wins; the budget (``sims``, ``ms``) and ``batch`` are always the caller's.
NETWORK_OPTIONS = ("c", "fpu", "ptemp")

#: Nodes of a time-budgeted tree, and the bytes it may take (child ids and priors: 8 bytes per node
#: and action), whichever is smaller: 20,000 nodes for the base game, about 6,700 with the module table.
TIMED_TREE_NODES = 20_000
TIMED_TREE_BYTES = 40_000_000


def validate_params(params: dict[str, object]) -> dict[str, object]:
    """Typed, range-checked ``az`` options (defaults filled in); errors name the option."""
    out = typed_options("az option", PARAMS, params, " (and a model first)")
    checks = {
        "sims": out["sims"] > 0,
        "ms": out["ms"] >= 0,
        "max_ms": out["max_ms"] >= 0 and not (out["max_ms"] > 0 and out["ms"] > 0),
        "c": out["c"] >= 0,
        "fpu": out["fpu"] >= 0,
        "batch": 1 <= out["batch"] <= 64,
        "ptemp": out["ptemp"] > 0,
        "stop": 0 <= out["stop"] <= 1,
        # an explicit stop is refused, not ignored: sequential halving always spends the whole budget
        "gumbel": out["gumbel"] == 0
        or (out["gumbel"] >= 2 and out["ms"] == 0 and out["max_ms"] == 0 and "stop" not in params),
    }
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        raise ValueError(
            "az option(s) out of range: " + ", ".join(f"{k}={out[k]!r} ({PARAMS[k][2]})" for k in bad)
        )
    return out


def check_network_options(given: dict[str, object], owner: str) -> dict[str, object]:
    """``given`` typed and range-checked as ``az`` options, refused (naming ``owner``) unless every key
    is one of :data:`NETWORK_OPTIONS`; what the metadata reader and ``training.ship`` both call."""
    unknown = sorted(set(given) - set(NETWORK_OPTIONS))
    if unknown:
        raise ValueError(
            f"{owner} sets az option(s) {unknown}; a network may set only {', '.join(NETWORK_OPTIONS)}"
        )
    checked = validate_params(given)
    return {k: checked[k] for k in given}


def network_options(path: str | Path | None) -> dict[str, object]:
    """The search options a shipped network records (:data:`NETWORK_OPTIONS`), checked; ``{}`` for others."""
    from agents.nets.shipped import search_options

    given = search_options(path) if path is not None else {}
    return check_network_options(given, f"network {str(path)!r}: its metadata")


def parse_az_spec(rest: str) -> tuple[str | None, dict[str, str]]:
    """``"ppo_2p,sims=100"`` -> ``("ppo_2p", {"sims": "100"})``; no model: ``None`` (the game's own)."""
    parts = [p.strip() for p in rest.split(",")] if rest else []
    path = None
    if parts and parts[0] and "=" not in parts[0]:
        path = parts.pop(0)
    return path, parse_options(",".join(parts))


class Network:
    """One exported network and the games it was trained for."""

    def __init__(self, path: str | Path | None, model: Any, seed: int | None) -> None:
        from agents.players.ppo import PPOAgent

        self.ppo = PPOAgent(path, model=model, seed=seed)
        self.label = self.ppo.label
        self.options = network_options(path)
        self.game = self.ppo.game
        self.weights = export_network(self.ppo.policy)
        self.num_actions = num_actions_of(self.weights)
        self.obs_dim = observation_size(self.weights)
        self._check()

    def _check(self) -> None:
        """The numba network against torch on a fresh deal of a game it plays, every seat's view."""
        from splendor_env.observation import observe

        n = min(self.game["players"])
        s = new_state(n, 0, modules=tuple(self.game["modules"]))
        probe = np.zeros((n, self.obs_dim), dtype=np.float32)
        for p in range(n):
            observe(s, p, probe[p])
        check_export(self.ppo.policy, self.weights, probe)

    def covers(self, num_players: int, modules: tuple[str, ...]) -> bool:
        return int(num_players) in self.game["players"] and set(modules) == set(self.game["modules"])


class AZAgent(Agent):
    """PUCT over determinised states with a PPO network as prior and value (docs/agents.md, "One search core").

    ``act`` needs ``state=``, a state already determinised for the acting seat (as for ``mcts``).
    With ``path`` (or ``model``) it plays the games that network was trained for; without, it
    loads the shipped network of each game it is asked to play (:meth:`check_game` or the
    first move of a game).
    """

    name = "az"
    needs_state = True

    def __init__(
        self, path: str | Path | None = None, seed: int | None = None, model: Any = None, **params: object
    ):
        super().__init__(seed)
        self.params = validate_params(params)
        self._given = set(params)  # these win over a network's own options (NETWORK_OPTIONS)
        self._seed = seed
        self.fixed = path is not None or model is not None
        self._nets: dict[tuple[int, tuple[str, ...]], Network] = {}
        self._searches: dict[tuple[str, int], Search] = {}  # (network, tree nodes) -> its search
        self.net: Network | None = None
        self._timed_ready = False  # the search compiled before a timed move
        self._last: Search | None = None  # the search that ran last
        self._last_root: np.ndarray | None = None  # the state the last search started from
        if self.fixed:
            self.net = Network(path, model, seed)
        self.plays_modules = self.net is None or bool(self.net.game["modules"])  # read by base.check_game

    # -- which network ---------------------------------------------------------
    @property
    def label(self) -> str:
        return self.net.label if self.net is not None else "the shipped network of each game"

    @property
    def ppo(self) -> Any:
        """The PPO agent of the current network (loads the 2-player base one if none is chosen yet)."""
        return self.network(2, ()).ppo if self.net is None else self.net.ppo

    @property
    def weights(self) -> tuple[np.ndarray, ...]:
        """The exported weights of the current network (the 2-player base one if none is chosen yet)."""
        return (self.network(2, ()) if self.net is None else self.net).weights

    def network(self, num_players: int, modules: tuple[str, ...] | list[str] = ()) -> Network:
        """The network for this game (loaded once per game), or a clear error naming the game."""
        from agents.nets.checkpoint import describe_game
        from agents.nets.shipped import default_model, shipped_names

        mods = st.module_names(st.parse_modules(tuple(modules)))
        if self.fixed:
            assert self.net is not None
            if not self.net.covers(num_players, mods):
                raise ValueError(
                    f"agent 'az' with network {self.label!r} plays only "
                    f"{describe_game(self.net.game['players'], self.net.game['modules'])}; "
                    f"got {num_players} players, modules {list(mods) or 'none'}"
                )
            return self.net
        key = (int(num_players), mods)
        if key not in self._nets:
            name = default_model(num_players, mods)
            if name is None:
                raise ValueError(
                    f"agent 'az' has no shipped network for "
                    f"{describe_game(int(num_players), mods)}; "
                    f"shipped: {', '.join(shipped_names())}; pass one trained for this game: az:PATH.zip"
                )
            for net in self._nets.values():  # 3 and 4 players share one network
                if net.label == name:
                    self._nets[key] = net
                    break
            else:
                self._nets[key] = Network(name, None, self._seed)
        self.net = self._nets[key]
        return self.net

    def check_game(self, num_players: int, modules: list[str] | tuple[str, ...] = ()) -> None:
        """Refuse a game no network of this agent covers, naming what differs (loads the network)."""
        self.network(num_players, tuple(modules))

    # -- search ----------------------------------------------------------------
    def search_params(self, net: Network, num_players: int) -> dict[str, object]:
        """The options a search with ``net`` runs with in a ``num_players`` game: the spec's, else the
        network's, else the defaults (``sims`` by player count, :data:`DEFAULT_SIMS`)."""
        own = {k: v for k, v in net.options.items() if k not in self._given}
        if "sims" not in self._given:
            own["sims"] = DEFAULT_SIMS[num_players]
        return {**self.params, **own}

    def _search(self, state: np.ndarray, sims: int | None) -> tuple[Any, ...]:
        """``(state, its Search, options, (c, fpu, ptemp), search seed)`` for a search from ``state``.

        The search (:class:`agents.search.driver.Search`, a batch of one tree) is kept per network and
        tree size; a search with fewer ``sims`` than the option's (self-play's cheap searches) uses the
        option's tree, so either kind can go on from the other's."""
        s = np.ascontiguousarray(state, dtype=np.int32)
        num_players = int(s[st.N_PLAYERS])
        net = self.network(num_players, st.module_names(int(s[st.MODULES])))
        p = self.search_params(net, num_players)
        timed = min(TIMED_TREE_NODES, TIMED_TREE_BYTES // (8 * net.num_actions))
        key = (net.label, int(p["sims"]) + 1 if p["ms"] == 0 else timed)
        if key not in self._searches:
            self._searches[key] = Search(net.weights, 1, key[1], int(p["batch"]))
        if sims is not None:
            p["sims"] = int(sims)
        seed = np.array([self.rng.integers(0, 2**63)], dtype=np.uint64)
        params = tuple(np.array([float(p[k])]) for k in ("c", "fpu", "ptemp"))
        return s, self._searches[key], p, params, seed

    @property
    def last_tree(self) -> Tree | None:
        """The tree of the last search (its root's children: ``root_stats``), ``None`` before the first."""
        return None if self._last is None else self._last.trees.tree(0)

    @property
    def simulations(self) -> int:
        """How many simulations the last search ran (0 before the first)."""
        return 0 if self._last is None else int(self._last.trees.arrays[2][0, 0])

    def root_visits(
        self, state: np.ndarray, early_stop: bool = False, sims: int | None = None, after: Any = None
    ) -> np.ndarray:
        """Visit count of every root action after one search from ``state`` (seat on move).

        ``early_stop`` applies the ``stop`` option (:meth:`act` does; training targets do not,
        as it leaves the other counts short). ``sims`` replaces the option for this search (the
        cheap searches of playout-cap randomisation in self-play). Also sets ``root_value``: what
        the search thinks the position is worth to the seat on move (a value target in training).

        ``after`` (the moves played since this agent's last search, in a game it plays every seat of):
        go on in the subtree those moves lead to, where :func:`agents.search.subtree.same_information`
        allows, and count its visits in the budget, as AlphaZero kept the subtree between moves.
        """
        s, search, p, params, seed = self._search(state, sims)
        keep = None
        last = self._last_root
        if after is not None and search is self._last and last is not None and same_information(last, s):
            keep = [(0, np.asarray(after, dtype=np.int64))]
        if p["ms"] > 0 and not self._timed_ready:  # compile (or load) the search before the clock runs
            search.search(s[None], np.zeros(1, np.uint64), params, np.ones(1, np.int64))
            self._timed_ready = True
        self._last, self._last_root = search, s.copy()
        budget = (float(p["ms"]), float(p["max_ms"]), float(p["stop"]) if early_stop else 0.0)
        counts, values = search.search(s[None], seed, params, np.array([int(p["sims"])]), keep, *budget)
        self.root_value = float(values[0])
        return counts[0]

    def gumbel_search(self, state: np.ndarray, actions: int = 16) -> tuple[int, np.ndarray]:
        """Gumbel AlphaZero's root (Danihelka et al. 2022): ``(move, policy target)`` from ``state``.

        Why: at a few simulations PUCT's visit counts are mostly exploration, a poor target; Gumbel's
        root improves on the prior with any budget. ``actions`` moves are drawn without replacement
        (Gumbel-top-k over the prior's logits, from this agent's seeded stream), sequential halving
        spends the ``sims`` budget on them (PUCT below the root), and the move is the survivor with
        the highest ``g + logits + sigma(q)``; the target is ``softmax(logits + sigma(completed q))``
        over the legal ids (:class:`agents.search.gumbel.GumbelRoot`). Sets ``root_value`` as :meth:`root_visits` does.
        """
        s, search, p, params, seed = self._search(state, None)
        if p["ms"] > 0:
            raise ValueError("az option root=gumbel needs a simulation budget (sims), not ms")
        mask = np.zeros(search.num_actions, dtype=np.int8)
        rules.legal_mask(s, mask)
        noise = self.rng.gumbel(size=int(mask.sum()))
        self._last, self._last_root = search, s.copy()
        moves, targets, values = search.gumbel_search(s[None], seed, params, int(p["sims"]), [noise], actions)
        self.root_value = float(values[0])
        return moves[0], targets[0]

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        s, legal, mask = search_inputs("AZAgent", state, action_mask)
        self.network(
            int(s[st.N_PLAYERS]), st.module_names(int(s[st.MODULES]))
        )  # refuse a game no network covers
        if legal.size == 1:
            return int(legal[0])
        if self.params["gumbel"]:
            return self.gumbel_search(s, int(self.params["gumbel"]))[0]
        counts = self.root_visits(s, early_stop=True)
        return int(np.argmax(np.where(mask != 0, counts, -1.0)))

    def __repr__(self) -> str:
        return f"AZAgent({self.label!r}, {', '.join(f'{k}={v}' for k, v in self.params.items())})"


__all__ = [
    "NETWORK_OPTIONS",
    "PARAMS",
    "AZAgent",
    "Network",
    "check_network_options",
    "parse_az_spec",
    "validate_params",
]
