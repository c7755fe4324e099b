"""Which games an agent can play: one check shared by training, evaluation, tournaments and play.

Kept free of torch and Stable-Baselines3 imports, so ``training.play`` and the
tournament need only the env and the agents they are asked for.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.base import check_game


def check_plays(agent: object, label: str, num_players: int, modules: Sequence[str] = ()) -> None:
    """Refuse, naming the agent and what differs, a game it cannot play (:func:`agents.base.check_game`)."""
    check_game(agent, label, tuple(modules), num_players)


def plays(agent: object, label: str, num_players: int, modules: Sequence[str] = ()) -> str | None:
    """``None`` if the agent can play the game, else the one-line reason (for skipping it in a schedule)."""
    try:
        check_plays(agent, label, num_players, modules)
    except ValueError as exc:
        return str(exc)
    return None


def config_label(num_players: int, modules: Sequence[str] = ()) -> str:
    """``"3p base"`` / ``"2p cities+orient"``: the name of one game configuration in reports and folders."""
    return f"{num_players}p {'+'.join(modules) if modules else 'base'}"


def config_folder(num_players: int, modules: Sequence[str] = ()) -> str:
    """``"3p_base"`` / ``"2p_cities+orient"``: :func:`config_label` as a folder name under a run's ``--out``."""
    return config_label(num_players, modules).replace(" ", "_")
