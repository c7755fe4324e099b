"""Text drawing of a game for ``render_mode="ansi"`` / ``"human"`` and logs."""

from __future__ import annotations

import numpy as np

from . import state as st
from .cards import CARD_COLOUR, CARD_COST, CARD_LEVEL, CARD_POINTS, COLOUR_LETTERS, COLOURS, NOBLE_REQ


def _tokens(arr: np.ndarray) -> str:
    return " ".join(f"{COLOUR_LETTERS[c]}{int(n)}" for c, n in enumerate(arr))


def _card(card: int) -> str:
    if card < 0:
        return "(empty)".ljust(24)
    cost = " ".join(f"{n}{COLOUR_LETTERS[c]}" for c, n in enumerate(CARD_COST[card]) if n)
    return f"{COLOURS[CARD_COLOUR[card]]:<5} {CARD_POINTS[card]}pt [{cost}]".ljust(24)


def render_text(s: np.ndarray, viewer: int | None = None) -> str:
    """The board as text: bank, nobles, market with costs, then every player.

    With ``viewer`` set, other players' blind reserves are drawn as hidden
    cards; with ``viewer=None`` (a spectator with full knowledge) all are shown.
    Colour letters: W white, U blue, G green, R red, K black, * gold.
    """
    n = int(s[st.N_PLAYERS])
    lines = [
        f"turn {int(s[st.TURN])}  player_{int(s[st.CURRENT])} to move  "
        f"phase: {st.PHASE_NAMES[s[st.PHASE]]}" + ("  FINAL ROUND" if s[st.FINAL_ROUND] else ""),
        f"bank: {_tokens(s[st.BANK : st.BANK + 6])}",
    ]
    nobles = []
    for k in range(st.NOBLE_SLOTS):
        noble = int(s[st.NOBLE_ID + k])
        if noble >= 0 and s[st.NOBLE_OWNER + k] < 0:
            req = " ".join(f"{r}{COLOUR_LETTERS[c]}" for c, r in enumerate(NOBLE_REQ[noble]) if r)
            nobles.append(f"[{k + 1}: {req}]")
    lines.append("nobles: " + (" ".join(nobles) or "none"))
    for lvl in (2, 1, 0):
        row = " | ".join(_card(int(s[st.MARKET + lvl * 4 + k])) for k in range(4))
        lines.append(f"L{lvl + 1} ({int(s[st.DECK_COUNT + lvl]):>2} left): {row}")
    for p in range(n):
        po = st.player_offset(p)
        marker = ">" if p == s[st.CURRENT] and not s[st.PHASE] >= st.PHASE_GAME_OVER else " "
        lines.append(
            f"{marker}player_{p}: {int(s[po + st.P_PRESTIGE])} prestige, "
            f"{int(s[po + st.P_CARDS])} cards, {int(s[po + st.P_NOBLES])} nobles | "
            f"tokens {_tokens(s[po + st.P_TOKENS : po + st.P_TOKENS + 6])} | "
            f"bonuses {_tokens(s[po + st.P_BONUS : po + st.P_BONUS + 5])}"
        )
        for r in range(st.MAX_RESERVED):
            card = int(s[po + st.P_RESERVED + r])
            if card < 0:
                continue
            blind = bool(s[po + st.P_RESERVED_BLIND + r])
            if blind and viewer is not None and viewer != p:
                lines.append(f"    reserved {r + 1}: hidden level {CARD_LEVEL[card] + 1} card")
            else:
                lines.append(f"    reserved {r + 1}: {_card(card).rstrip()}" + (" (blind)" if blind else ""))
    if s[st.PHASE] == st.PHASE_GAME_OVER:
        winners = [f"player_{p}" for p in range(n) if s[st.OUTCOME + p]]
        lines.append(
            "game over: " + (" and ".join(winners) + (" share the victory" if len(winners) > 1 else " wins"))
        )
    elif s[st.PHASE] == st.PHASE_TRUNCATED:
        lines.append("game truncated at the turn cap")
    return "\n".join(lines)
