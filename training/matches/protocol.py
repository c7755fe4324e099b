"""The benchmark protocols: the references, their budgets, the deals, the games and the anchors of every card.

Why fixed and versioned: a policy's strength is only comparable when the opponents, their budgets,
the deals and the scoring are the same. A protocol fixes them and carries a version, shown on every
card; a change to a protocol is a new version, and every version stays here so older cards are
still read and labelled (:func:`protocol_of`). How to read a card: docs/benchmark.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from splendor_env.layout import MODULE_NAMES
from training.common.games import config_label

_CONFIGS = [
    [2, []],
    [3, []],
    [4, []],
    [2, list(MODULE_NAMES)],
    [3, list(MODULE_NAMES)],
    [4, list(MODULE_NAMES)],
]
# the network the `az` reference searches with in each configuration, named so that shipping
# new default networks leaves the protocol as it is (the defaults of 0.5.0); where none is
# named, the `az` reference sits out
_AZ_NETWORKS = [
    [2, [], "az_2p"],
    [3, [], "az_3_4p"],
    [4, [], "az_3_4p"],
    [2, list(MODULE_NAMES), "az_modules_2p"],
]

#: Protocol 1 (2026-11-24 to 0.5.x): one anchor per reference, measured in the 2-player base round
#: robin of every agent (100 games a pair, docs/results/ladder.md, commit 8850274) and used by
#: convention in every game; `az:sims=1000` was rated there with its 2-player network `ppo_2p`,
#: not the `az_2p` its cards play. `random` won no game there, so its anchor is only a floor.
PROTOCOL_1: dict[str, Any] = {
    "version": 1,
    "references": {
        "random": 624.0,
        "greedy": 1326.0,
        "lookahead": 1630.0,
        "mcts:sims=400": 1699.0,
        "az:sims=1000": 2021.0,
    },
    "configs": _CONFIGS,
    "az_networks": _AZ_NETWORKS,
    "games": {"full": 200, "quick": 50},  # per reference and configuration, seat-rotated
    "seed": 20261127,  # the deals: every card plays the same ones
    "deterministic": True,  # a PPO candidate plays its argmax move
    "prior": 0.5,  # wins added each way per reference in the rating fit, so a perfect record stays finite
}

#: Protocol 2: the same references, budgets, networks and deals as protocol 1; the anchors are
#: measured per game from the references' own cards under this protocol (each reference against
#: every other one, itself left out: ``python -m training.anchors``), `greedy` pinned at its
#: protocol-1 rating so the two scales meet there. ``anchors`` maps a game's label to the
#: references' ratings in it; a game not in it is played but not yet rated.
PROTOCOL_2: dict[str, Any] = {
    "version": 2,
    "references": ["random", "greedy", "lookahead", "mcts:sims=400", "az:sims=1000"],
    # frozen from results/cards/protocol-2/anchors.json (every game's round robin finished)
    "anchors": {
        "2p base": {
            "random": 539.0,
            "greedy": 1326.0,
            "lookahead": 1571.0,
            "mcts:sims=400": 1677.0,
            "az:sims=1000": 2015.0,
        },
        "3p base": {
            "random": 602.0,
            "greedy": 1326.0,
            "lookahead": 1459.0,
            "mcts:sims=400": 1627.0,
            "az:sims=1000": 1802.0,
        },
        "4p base": {
            "random": 445.0,
            "greedy": 1326.0,
            "lookahead": 1412.0,
            "mcts:sims=400": 1608.0,
            "az:sims=1000": 1693.0,
        },
        "2p cities+trading_posts+orient+strongholds": {
            "random": 518.0,
            "greedy": 1326.0,
            "mcts:sims=400": 1886.0,
            "az:sims=1000": 2108.0,
        },
        "3p cities+trading_posts+orient+strongholds": {
            "random": 520.0,
            "greedy": 1326.0,
            "mcts:sims=400": 1862.0,
        },
        "4p cities+trading_posts+orient+strongholds": {
            "random": 549.0,
            "greedy": 1326.0,
            "mcts:sims=400": 1768.0,
        },
    },
    "pin": ["greedy", 1326.0],
    "skip_self": True,  # a reference's own card does not play it against itself (even by symmetry)
    "configs": _CONFIGS,
    "az_networks": _AZ_NETWORKS,
    "games": {"full": 200, "quick": 50},
    "seed": 20261127,
    "deterministic": True,
    "prior": 0.5,
}

PROTOCOLS: dict[int, dict[str, Any]] = {1: PROTOCOL_1, 2: PROTOCOL_2}

#: The protocol new cards are played under.
PROTOCOL: dict[str, Any] = PROTOCOL_2


def protocol_of(version: int) -> dict[str, Any]:
    """The protocol of that version, or a clear error naming the known ones."""
    if version not in PROTOCOLS:
        raise ValueError(f"unknown benchmark protocol {version!r} (known: {', '.join(map(str, PROTOCOLS))})")
    return PROTOCOLS[version]


def references(protocol: dict[str, Any]) -> list[str]:
    """The protocol's reference specs, in its order (the order seeds the games against each)."""
    return list(protocol["references"])


def anchor_of(protocol: dict[str, Any], reference: str, players: int, modules: Sequence[str]) -> float | None:
    """``reference``'s anchor Elo in one game, or ``None`` where the protocol has not measured it."""
    if protocol["version"] == 1:
        return float(protocol["references"][reference])
    value = protocol["anchors"].get(config_label(players, sorted_modules(modules)), {}).get(reference)
    return None if value is None else float(value)


def sorted_modules(modules: Sequence[str]) -> tuple[str, ...]:
    """Modules in the protocol's order (a game's label names them so)."""
    return tuple(m for m in MODULE_NAMES if m in modules)


def reference_spec(
    reference: str, players: int, modules: Sequence[str], protocol: dict[str, Any] | None = None
) -> str | None:
    """The spec a reference plays in one configuration: the `az` reference with the network the
    protocol names for it (``None``: no network named, it sits out), every other one as it is."""
    name, _, options = reference.partition(":")
    if name != "az":
        return reference
    for n, mods, network in (protocol or PROTOCOL)["az_networks"]:
        if n == players and sorted(mods) == sorted(modules):
            return f"az:{network}" + (f",{options}" if options else "")
    return None


def played_protocol(protocol: dict[str, Any]) -> dict[str, Any]:
    """What the games depend on (a run's manifest): the protocol without the anchors measured after."""
    return {k: v for k, v in protocol.items() if k != "anchors"} if protocol["version"] >= 2 else protocol


__all__ = [
    "PROTOCOL",
    "PROTOCOLS",
    "PROTOCOL_1",
    "PROTOCOL_2",
    "anchor_of",
    "played_protocol",
    "protocol_of",
    "reference_spec",
    "references",
    "sorted_modules",
]
