"""PUCT search guided by a trained network (spec ``az[:MODEL][,key=value...]``), every game a network covers.

Why: a PPO policy alone (``ppo:ppo_2p``) plays its first impression; a search that uses its
policy as the prior and its critic as the leaf value looks ahead where the network is unsure
(the AlphaZero recipe, without new training). It is the shared search core
(:mod:`agents.search`) with the network evaluator (:mod:`agents.net`); which network plays
which game, its options and budget: docs/agents.md ("One search core"). Options: :data:`PARAMS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from splendor_env import rules
from splendor_env import state as st
from splendor_env.deal import new_state
from splendor_env.state import CURRENT, MAX_PLAYERS

from .base import Agent, search_inputs
from .gumbel import GumbelRoot
from .net import NetBuffers, check_export, export_network, num_actions_of, observation_size
from .options import parse_options, typed_options
from .search import Tree, run_budget, search_network, warm_up
from .subtree import same_information

#: name -> (type, default, help) for every option of the ``az`` spec.
PARAMS: dict[str, tuple[type, object, str]] = {
    "sims": (
        int,
        1000,
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

#: The default ``sims`` by player count. Why more with 3 or 4: a round has one ply per seat, so a
#: tree of the same size sees fewer of the searching seat's own turns, and the 3-player results
#: gain from the extra simulations (``az_3_4p`` against two ``greedy``: 83.8% at 1000, 85.7% at
#: 2000; the models page). ``stop`` spares most of their cost.
DEFAULT_SIMS = {2: 1000, 3: 2000, 4: 2000}

#: The options a shipped network's metadata may set (``"az"`` in its ``NAME.json``, read by
#: :func:`agents.models.search_options`): they say how to read that network's outputs (how flat
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
    from .models import search_options

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
    """One exported network with its scratch buffers and the games it was trained for."""

    def __init__(self, path: str | Path | None, model: Any, batch: int, seed: int | None) -> None:
        from .ppo import PPOAgent

        self.ppo = PPOAgent(path, model=model, seed=seed)
        self.label = self.ppo.label
        self.options = network_options(path)
        self.game = self.ppo.game
        self.weights = export_network(self.ppo.policy)
        self.num_actions = num_actions_of(self.weights)
        self.obs_dim = observation_size(self.weights)
        self._check()
        self.obs = np.zeros((batch, self.obs_dim), dtype=np.float32)
        self.other_obs = np.zeros((batch * (MAX_PLAYERS - 1), self.obs_dim), dtype=np.float32)
        self.leaf_mask = np.zeros((batch, self.num_actions), dtype=np.int8)
        self.buf = NetBuffers(self.weights, batch, others=batch * (MAX_PLAYERS - 1))

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

    def search_args(self) -> tuple[np.ndarray, ...]:
        """The scratch arrays :func:`agents.search.search_network` takes after ``rng``."""
        return (self.obs, self.other_obs, self.leaf_mask, *self.buf.search_args())


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
        self._trees: dict[int, Tree] = {}
        self.net: Network | None = None
        self._timed_ready = False  # the search compiled before a timed move
        self.last_tree: Tree | None = None  # the tree of the last search (its root's children: root_stats)
        self._last_root: np.ndarray | None = None  # the state the last search started from
        if self.fixed:
            self.net = Network(path, model, int(self.params["batch"]), seed)
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
        from .checkpoint import describe_game
        from .models import default_model, shipped_names

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
                self._nets[key] = Network(name, None, int(self.params["batch"]), self._seed)
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

    def _tree(self, num_actions: int, p: dict[str, object]) -> Tree:
        timed = min(TIMED_TREE_NODES, TIMED_TREE_BYTES // (8 * num_actions))
        nodes = int(p["sims"]) + 1 if p["ms"] == 0 else timed
        key = (num_actions, nodes)
        if key not in self._trees:
            self._trees[key] = Tree(nodes, num_actions, int(p["batch"]), priors=True)
        return self._trees[key]

    @property
    def simulations(self) -> int:
        """How many simulations the last search ran (0 before the first)."""
        return 0 if self.last_tree is None else int(self.last_tree.arrays[2][0])

    def _searcher(self, state: np.ndarray, sims: int | None, after: Any = None) -> tuple[Any, ...]:
        """The tree for a search from ``state`` and ``run(k, n, forced=-1)``, which runs ``k`` more
        simulations of it (:func:`agents.search.search_network`); also the options, the seat and the
        node count of the subtree kept from the last search (0: the tree is empty).

        ``after``: the moves played since this agent's last search, which then goes on in the subtree
        they lead to where :func:`agents.subtree.same_information` allows (self-play's ``reuse``);
        ``None`` starts an empty tree. A search with fewer ``sims`` than the option's (self-play's
        cheap searches) uses the option's tree, so either kind can go on from the other's."""
        s = np.ascontiguousarray(state, dtype=np.int32)
        num_players = int(s[st.N_PLAYERS])
        net = self.network(num_players, st.module_names(int(s[st.MODULES])))
        p = self.search_params(net, num_players)
        tree = self._tree(net.num_actions, p)
        if sims is not None:
            p["sims"] = int(sims)
        seat = int(s[CURRENT])
        rng = np.array([self.rng.integers(0, 2**63)], dtype=np.uint64)
        kept = 0
        last = self._last_root
        if after is not None and tree is self.last_tree and last is not None and same_information(last, s):
            kept = tree.keep_subtree(np.asarray(after, dtype=np.int64), seat)
        if kept == 0:
            tree.reset(seat)
        self.last_tree = tree
        self._last_root = s.copy()
        common = (
            float(p["c"]),
            float(p["fpu"]),
            int(p["batch"]),
            float(p["ptemp"]),
            net.weights,
            tree.arrays,
        )
        scratch = net.search_args()

        def run(k: int, n: int, forced: int = -1) -> int:
            if forced >= 0:
                return search_network(s, seat, k, *common, n, rng, *scratch, forced)
            return search_network(s, seat, k, *common, n, rng, *scratch)

        return s, tree, run, p, seat, kept

    def root_visits(
        self, state: np.ndarray, early_stop: bool = False, sims: int | None = None, after: Any = None
    ) -> np.ndarray:
        """Visit count of every root action after one search from ``state`` (seat on move).

        ``early_stop`` applies the ``stop`` option (:meth:`act` does; training targets do not,
        as it leaves the other counts short). ``sims`` replaces the option for this search (the
        cheap searches of playout-cap randomisation in self-play). Also sets ``root_value``: the
        visit-weighted mean value of the root's children for that seat, which
        :mod:`training.search.selfplay` records next to the visits.

        ``after`` (the moves played since this agent's last search, in a game it plays every seat of):
        go on in the subtree those moves lead to, where :func:`agents.subtree.same_information` allows,
        and count its visits in the budget: ``sims`` is then the root's visits after the search, as
        in AlphaZero, which kept the subtree between moves; without it, or where the subtree is not
        kept, the search starts from an empty tree.
        """
        _, tree, run, p, seat, kept = self._searcher(state, sims, after)
        if p["ms"] > 0 and not self._timed_ready:
            warm_up(run, tree, seat)
            self._timed_ready = True
        # the root alone first: its prior guides the rest
        chunk = 4 * int(p["batch"])
        stop = float(p["stop"]) if early_stop else 0.0  # run_budget ignores it in a timed search

        def decided(left: int) -> bool:
            return tree.root_lead() > stop * left

        tree.used = run_budget(
            run,
            int(p["sims"]) - int(tree.arrays[2][0]),  # a kept subtree's visits count
            float(p["ms"]),
            chunk,
            tree.max_nodes,
            first=0 if kept else 1,
            decided=decided if stop > 0 else None,
            max_ms=float(p["max_ms"]),
            nodes=max(kept, 1),
        )
        actions, visits, values = tree.root_stats(seat)
        counts = np.zeros(tree.num_actions)
        # the value breaks ties (its term is below 0.5, so it never outweighs a visit)
        counts[actions] = visits + 0.25 * (1.0 + np.clip(values / np.maximum(visits, 1.0), -1.0, 1.0))
        # what the search thinks the position is worth to the seat on move (a value target in training)
        self.root_value = float(values.sum() / max(visits.sum(), 1.0))
        return counts

    def gumbel_search(self, state: np.ndarray, actions: int = 16) -> tuple[int, np.ndarray]:
        """Gumbel AlphaZero's root (Danihelka et al. 2022): ``(move, policy target)`` from ``state``.

        Why: at a few simulations PUCT's visit counts are mostly exploration, a poor target; Gumbel's
        root improves on the prior with any budget. ``actions`` moves are drawn without replacement
        (Gumbel-top-k over the prior's logits, from this agent's seeded stream), sequential halving
        spends the ``sims`` budget on them (PUCT below the root), and the move is the survivor with
        the highest ``g + logits + sigma(q)``; the target is ``softmax(logits + sigma(completed q))``
        over the legal ids (:class:`agents.gumbel.GumbelRoot`). Sets ``root_value`` as :meth:`root_visits` does.
        """
        s, tree, run, p, seat, _ = self._searcher(state, None)
        if p["ms"] > 0:
            raise ValueError("az option root=gumbel needs a simulation budget (sims), not ms")
        mask = np.zeros(tree.num_actions, dtype=np.int8)
        rules.legal_mask(s, mask)
        legal = np.flatnonzero(mask)
        n = run(1, 1)  # the root alone: its prior and value
        root = GumbelRoot(tree.arrays, legal, seat, self.rng.gumbel(size=legal.size), actions, int(p["sims"]))
        for _ in range(root.phases):
            for move, k in root.plan():
                n = run(k, n, move)
            root.halve()
        tree.used = n
        _, vis, values = tree.root_stats(seat)
        self.root_value = float(values.sum() / max(vis.sum(), 1.0))
        return root.result(tree.num_actions)

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
