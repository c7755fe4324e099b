"""Text drawing of a game for ``render_mode="ansi"`` / ``"human"`` and logs."""

from __future__ import annotations

import warnings

import numpy as np

from . import state as st
from .cards import (
    ALL_CARD_COST,
    ALL_CARD_EFFECT,
    ALL_CARD_LEVEL,
    ALL_CARD_POINTS,
    ALL_CARD_SAC_COLOUR,
    ALL_CARD_SAC_COUNT,
    CITY_PRESTIGE,
    CITY_REQ,
    CITY_SAME,
    COLOUR_LETTERS,
    EFFECTS,
    NOBLE_REQ,
    TRADING_POSTS,
    colour_name,
)


def _tokens(arr: np.ndarray) -> str:
    return " ".join(f"{COLOUR_LETTERS[c]}{int(n)}" for c, n in enumerate(arr))


def _sh(s: np.ndarray, m: int) -> str:
    """Strongholds on market slot ``m`` as ``{p0x2}``, or nothing."""
    if not s[st.MODULES] & st.MOD_STRONGHOLDS:
        return ""
    marks = [f"p{q}x{int(s[st.SH_ON + m * 4 + q])}" for q in range(4) if s[st.SH_ON + m * 4 + q]]
    return "{" + ",".join(marks) + "}" if marks else ""


def _card(card: int, suffix: str = "") -> str:
    if card < 0:
        return ("(empty)" + suffix).ljust(24)
    cost = " ".join(f"{n}{COLOUR_LETTERS[c]}" for c, n in enumerate(ALL_CARD_COST[card]) if n)
    if ALL_CARD_SAC_COUNT[card]:
        cost = f"sacrifice {ALL_CARD_SAC_COUNT[card]}{COLOUR_LETTERS[ALL_CARD_SAC_COLOUR[card]]}"
    text = f"{colour_name(card):<5} {ALL_CARD_POINTS[card]}pt [{cost}]"
    if ALL_CARD_EFFECT[card]:
        text += f" {EFFECTS[ALL_CARD_EFFECT[card]]}"
    return (text + suffix).ljust(24)


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
    mods = int(s[st.MODULES])
    if mods & st.MOD_CITIES:
        cities = []
        for k in range(3):
            city = int(s[st.CITY_ID + k])
            if city < 0:
                continue
            req = " ".join(f"{r}{COLOUR_LETTERS[c]}" for c, r in enumerate(CITY_REQ[city]) if r)
            if CITY_SAME[city]:
                req += f" {CITY_SAME[city]} of another colour"
            owner = int(s[st.CITY_OWNER + k])
            cities.append(
                f"[{k + 1}: {CITY_PRESTIGE[city]} prestige {req}".rstrip()
                + (f", player_{owner}]" if owner >= 0 else "]")
            )
        lines.append("cities: " + " ".join(cities))
    for lvl in (2, 1, 0):
        row = " | ".join(_card(int(s[st.MARKET + lvl * 4 + k]), _sh(s, lvl * 4 + k)) for k in range(4))
        if mods & st.MOD_ORIENT:
            row += " || " + " | ".join(
                _card(int(s[st.OMARKET + lvl * 2 + k]), _sh(s, 12 + lvl * 2 + k)) for k in range(2)
            )
        lines.append(f"L{lvl + 1} ({int(s[st.DECK_COUNT + lvl]):>2} left): {row}")
    for p in range(n):
        po = st.player_offset(p)
        over = s[st.PHASE] in (st.PHASE_GAME_OVER, st.PHASE_TRUNCATED)
        marker = ">" if p == s[st.CURRENT] and not over else " "
        lines.append(
            f"{marker}player_{p}: {int(s[po + st.P_PRESTIGE])} prestige, "
            f"{int(s[po + st.P_CARDS])} cards, {int(s[po + st.P_NOBLES])} nobles | "
            f"tokens {_tokens(s[po + st.P_TOKENS : po + st.P_TOKENS + 6])} | "
            f"bonuses {_tokens(s[po + st.P_BONUS : po + st.P_BONUS + 5])}"
        )
        if mods:
            extra = []
            if mods & st.MOD_TRADING_POSTS:
                held = [TRADING_POSTS[k] for k in range(5) if s[st.TP_HELD + p] >> k & 1]
                extra.append("trading posts: " + (", ".join(held) or "none"))
            if mods & st.MOD_STRONGHOLDS:
                extra.append(f"strongholds in supply: {int(s[st.SH_SUPPLY + p])}")
            if mods & st.MOD_CITIES:
                owned = [k + 1 for k in range(3) if s[st.CITY_ID + k] >= 0 and s[st.CITY_OWNER + k] == p]
                extra.append(f"city: {owned[0]}" if owned else "no city")
            lines.append("    " + " | ".join(extra))
        for r in range(st.MAX_RESERVED):
            card = int(s[po + st.P_RESERVED + r])
            if card < 0:
                continue
            blind = bool(s[po + st.P_RESERVED_BLIND + r])
            if blind and viewer is not None and viewer != p:
                lines.append(f"    reserved {r + 1}: hidden level {ALL_CARD_LEVEL[card] + 1} card")
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


def render_as(s: np.ndarray, mode: str | None, viewer: int | None) -> str | np.ndarray | None:
    """What an env's ``render()`` returns for ``render_mode`` ``mode``, the board as ``viewer`` sees it.

    One body for the AEC env (a spectator, ``viewer=None``) and the Gymnasium view (the learner's
    seat): ``"rgb_array"`` draws :mod:`splendor_env.picture` (Pillow, the ``render`` extra, imported
    only then), ``"ansi"`` returns the text, ``"human"`` prints it; no mode warns and returns None.
    """
    if mode is None:
        warnings.warn(
            "render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'",
            stacklevel=3,
        )
        return None
    if mode == "rgb_array":
        from .picture import to_rgb_array

        return to_rgb_array(s, seat=viewer)
    text = render_text(s, viewer=viewer)
    if mode == "human":
        print(text + "\n")
        return None
    return text
