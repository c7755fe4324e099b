"""The agents the server seats: every search held to ``--max-ms-per-move`` while it runs.

Why: :func:`training.app.checks.check_seat` refuses a spec whose budget looks beyond the cap,
but that is an estimate (``SIMS_PER_MS``), and a slower or busier machine makes it wrong; a
server left running must not let one seat hold a core for longer than the cap. So every
``mcts`` and ``az`` seat with a simulation budget also gets the search's own cap, ``max_ms``
(:func:`agents.search.tree.run_budget`): a move stops at its simulations or at the cap, whichever
comes first, and a search the cap does not cut short is the search the spec names, move for
move. A seat given ``ms`` (at most the cap, checked) is a clock already; a seat's own lower
``max_ms`` is kept. Agents that do not search spend a fixed, small time a move (docs/app.md).
"""

from __future__ import annotations

from typing import Any

import agents
from agents.options import parse_options
from agents.players.az import AZAgent
from agents.players.mcts import MCTSAgent

#: The agents whose time a move follows their budget, and so get the cap.
SEARCHES = ("mcts", "az")


def capped_spec(spec: str, cap_ms: float) -> str:
    """``spec`` with ``max_ms`` at most ``cap_ms`` when it is a search on a simulation budget."""
    name, rest = agents.parse_spec(spec)
    if name not in SEARCHES:
        return spec
    parts = [p.strip() for p in rest.split(",")] if rest else []
    options = parse_options(",".join(p for p in parts if "=" in p))
    if float(options.get("ms", 0)) > 0:
        return spec
    given = float(options.get("max_ms", 0))
    cap = cap_ms if given <= 0 else min(given, cap_ms)
    parts = [p for p in parts if p.split("=")[0].strip() != "max_ms"] + [f"max_ms={cap:g}"]
    return f"{name}:{','.join(parts)}"


def build_seat(spec: str, seed: int, cap_ms: float) -> Any:
    """The agent for a checked seat spec (:func:`training.app.checks.check_seat`), seeded, each
    search held to ``cap_ms`` a move (:func:`capped_spec`)."""
    return agents.build(capped_spec(spec, cap_ms), seed=seed)


def clock_ms(agent: Any) -> float | None:
    """The most a seat's agent searches a move (ms), or ``None`` for an agent without a clock."""
    if isinstance(agent, (MCTSAgent, AZAgent)):
        ms, cap = float(agent.params["ms"]), float(agent.params["max_ms"])
        return ms if ms > 0 else cap if cap > 0 else None
    return None
