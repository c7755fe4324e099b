"""A person at the terminal as an agent (spec ``"human"``): the board, the legal moves with codes, a prompt.

Why: the first thing a user wants after training a policy is to play against it
(``python -m training.play --agents human ppo:ppo_2p``; the move codes: docs/agents.md,
"Playing yourself"). It only ever shows what its seat may see (``render_text(state,
viewer=seat)`` and the moves' descriptions, which hide other players' blind reserves and every
deck order), so it may be handed the true state (``trusted_view``: the fairness rule,
:mod:`agents.runner`).
"""

from __future__ import annotations

import sys
from typing import ClassVar, TextIO

import numpy as np
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from agents.base import AbandonGame, Agent, check_mask
from splendor_env import state as st
from splendor_env.actions import NUM_ACTIONS_ALL, TAKE2_SETS, TAKE3_SETS, block_of, describe
from splendor_env.render import render_text

LETTERS = "wugrk*"  # white blue green red black gold, as on the board (W U G R K *)

_MODULE_CODES = {
    "choose_city": "city",
    "choose_trading_post": "tp",
    "trading_post_token": "tpt",
    "trading_post_extra_token": "tpx",
    "keep_drawn_card": "keep",
    "reserve_orient_market": "ro",
    "reserve_orient_deck": "rod",
    "buy_orient_market": "bo",
    "buy_market_double_gold": "bdg",
    "buy_reserved_double_gold": "brdg",
    "pair_target": "pair",
    "free_card": "free",
    "sacrifice_discard": "sac",
    "stronghold_place": "shp",
    "stronghold_move": "shm",
    "stronghold_remove": "shr",
    "conquest": "cq",
}

_STYLES = {"W": "bold white", "U": "bold blue", "G": "bold green", "R": "bold red", "K": "bold magenta"}


class QuitGame(AbandonGame):
    """The human typed ``q``: the game is abandoned (the runner passes it on as it is)."""


def move_code(action: int) -> str:
    """The short code a human types for an action id (unique over the whole action table)."""
    name, i = block_of(int(action))
    if name == "take_3_different":
        return "t" + "".join(LETTERS[c] for c in TAKE3_SETS[i])
    if name == "take_2_different":
        return "t" + "".join(LETTERS[c] for c in TAKE2_SETS[i])
    if name == "take_1":
        return "t" + LETTERS[i]
    if name == "take_2_same":
        return "t" + LETTERS[i] * 2
    if name in ("reserve_market", "buy_market"):
        return f"{name[0]}{i // 4 + 1}{i % 4 + 1}"
    if name == "reserve_deck":
        return f"rd{i + 1}"
    if name == "buy_reserved":
        return f"br{i + 1}"
    if name == "discard":
        return "d" + LETTERS[i]
    if name == "choose_noble":
        return f"n{i + 1}"
    if name == "pass":
        return "pass"
    return f"{_MODULE_CODES[name]}{i + 1}"


def board_text(state: np.ndarray, seat: int) -> Text:
    """The board as ``seat`` sees it, with the colour letters coloured."""
    text = Text(render_text(state, viewer=seat))
    for letter, style in _STYLES.items():
        text.highlight_regex(rf"\b{letter}\d+\b|\b\d+{letter}\b", style)
    text.highlight_regex(r"\*\d+", "bold yellow")
    text.highlight_regex(rf"player_{seat}\b", "reverse")
    return text


class HumanAgent(Agent):
    """Asks a person for every decision; ``input`` / ``output`` default to stdin / stdout."""

    name = "human"
    needs_state: ClassVar[bool] = True
    #: Shows only what its seat may see, so it may be handed the true state (:func:`agents.runner.decision_state`).
    trusted_view: ClassVar[bool] = True

    def __init__(
        self, seed: int | None = None, input: TextIO | None = None, output: TextIO | None = None
    ) -> None:
        super().__init__(seed)
        self._input = input
        self.console = Console(file=output, highlight=False, width=120 if output is not None else None)

    def _read(self, prompt: str) -> str:
        self.console.print(prompt, end="")
        line = (self._input or sys.stdin).readline()
        if not line:
            raise ValueError("input ended before the game did (no more moves to read)")
        return line.strip().lower()

    def moves_table(self, legal: np.ndarray, state: np.ndarray) -> Table:
        """The legal moves: number, code and words."""
        table = Table(title="your legal moves", show_edge=False, pad_edge=False)
        table.add_column("#", justify="right")
        table.add_column("code", style="bold cyan")
        table.add_column("move")
        for k, a in enumerate(legal, 1):
            table.add_row(str(k), move_code(int(a)), describe(int(a), state))
        return table

    def parse(self, entry: str, legal: np.ndarray) -> int | str:
        """The action id for a typed code or number, else an explanation of what was wrong."""
        codes = {move_code(int(a)): int(a) for a in legal}
        if entry in codes:
            return codes[entry]
        if entry.isdigit():
            k = int(entry)
            if 1 <= k <= legal.size:
                return int(legal[k - 1])
            return f"there is no move number {k}: choose 1-{legal.size}"
        if not entry:
            return "type a move's code or number (? lists the moves, q quits)"
        if entry in {move_code(a) for a in range(NUM_ACTIONS_ALL)}:
            return f"{entry!r} is not a legal move now: choose one of the listed moves"
        example = move_code(int(legal[0]))
        return f"{entry!r} is not a move code: type a code from the list (e.g. {example}) or a number 1-{legal.size}"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        legal = check_mask(action_mask)
        if state is None:
            raise ValueError("HumanAgent needs state= to draw the board (training.play passes it)")
        seat = int(state[st.CURRENT])
        self.console.print(Panel(board_text(state, seat), title=f"you are player_{seat}", expand=False))
        self.console.print(self.moves_table(legal, state))
        while True:
            entry = self._read(f"player_{seat}, your move (code or number, ? for the list, q to quit): ")
            if entry in ("q", "quit", "exit"):
                raise QuitGame(f"player_{seat} quit the game")
            if entry in ("?", "help", "list"):
                self.console.print(self.moves_table(legal, state))
                continue
            choice = self.parse(entry, legal)
            if isinstance(choice, int):
                return choice
            self.console.print(Text(choice, style="red"))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        raise ValueError("a human plays one game at a time: use act(), not act_batch()")
