"""Trading Posts (``"trading_posts"``): lasting powers earned by bonuses.

Rules (docs/rules.md 7.2), as this engine plays them:

* Each column holds as many tiles as players and a player takes at most one
  of each power, so a column never runs out; the observation shows each
  seat's tiles (``mseat[k].trading_posts``). The extra noble tile is not used.
* End of turn, after the noble check: a trading post whose requirement
  (bonuses) the player meets and does not hold is taken; several:
  ``choose_trading_post``, one per turn (the others come on later turns,
  automatically if alone). Tiles are never lost, even when a sacrifice
  removes the bonuses.
* **Token after buying** (``trading_post_token``): after every purchase
  (main action or conquest), before the refill, one gem token of any colour
  the bank holds, including one just paid; once per purchase, including a
  purchase that grants free cards (free cards are not purchases).
* **Draw two** (``keep_drawn_card``): a blind reserve from any deck, base or
  Orient, with at least 2 cards draws the top two; id 0 keeps the first
  (the top card), id 1 the second; the other goes under that deck; the gold
  is taken as usual. With one card left it is simply reserved.
* **Extra token** (``trading_post_extra_token``): after taking 2 of a colour
  (still only with 4+ in the bank), 1 token of another gem colour the bank
  holds; none left: nothing. The token limit applies afterwards as usual.
* **Gold counts double**: **engine decision** on payment: coloured tokens
  first (as in the base game), then for each colour the shortfall is paid in
  gold at 2 per gold, rounded up per colour (a gold pays 2 of one colour;
  overpayment gives no change), and no token the purchase does not need is
  spent: with an odd shortfall the gold's second gem replaces a coloured
  token (owing 3 red with 2 red + 1 gold, the player pays 1 red + 1 gold;
  :func:`splendor_env.board.pay`). A gold still counts 1 for the token limit.
* **Points**: 1 prestige per trading post held, this one included, counted
  in the player's prestige everywhere (15-point end, city claims, winner).

Owns (rows tagged ``"trading_posts"`` in :mod:`splendor_env.layout`): state
``TP_HELD``, ``PD_TP_TOKEN``, ``PD_EXTRA_EXCL``, ``PD_DRAWN0``, ``PD_DRAWN1``,
``PD_DRAWN_DECK``; phases ``trading_post_choice``, ``trading_post_token``,
``trading_post_extra_token``, ``keep_drawn_card``; the blocks of the same
names; observation ``mseat[k].trading_posts``, ``pending_drawn_cards``,
``pending_excluded_colour``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..action_ids import CHOOSE_TRADING_POST, KEEP_DRAWN, TP_EXTRA_TOKEN, TP_TOKEN  # the module's action ids
from ..board import meets_req, reserve
from ..card_features import HIDDEN_CARD_TABLE, put_full_card
from ..cards import (
    COLOURS,
    TP_DRAW_TWO,
    TP_GOLD_DOUBLE,
    TP_POINTS,
    TP_TOKEN_AFTER_BUY,
    TRADING_POST_REQ,
    TRADING_POSTS,
)
from ..cards import TP_EXTRA_TOKEN as TP_POWER_EXTRA_TOKEN
from ..layout import CARD_DIM, FULL_CARD_DIM, OBS_OFFSETS
from ..reasons import OK, R_ALREADY_HELD, R_COLOUR_EMPTY, R_NOT_AN_OPTION, R_REQUIREMENT_NOT_MET
from ..state import (
    BANK,
    CURRENT,
    MAX_PLAYERS,
    P_PRESTIGE,
    P_TOKENS,
    PD_DRAWN0,
    PD_DRAWN1,
    PD_DRAWN_DECK,
    PD_EXTRA_EXCL,
    PD_TP_TOKEN,
    PHASE,
    PHASE_KEEP_DRAWN_CARD,
    PHASE_TRADING_POST_CHOICE,
    PHASE_TRADING_POST_EXTRA,
    PHASE_TRADING_POST_TOKEN,
    TP_HELD,
    deck_count_addr,
    draw_from,
    put_bottom,
)

O_PDRAWN = OBS_OFFSETS["pending_drawn_cards"][0]
O_PEXCL = OBS_OFFSETS["pending_excluded_colour"][0]


@njit(cache=True, inline="always")
def has(s: np.ndarray, p: int, k: int) -> bool:
    """Seat ``p`` holds trading post ``k``."""
    return (s[TP_HELD + p] >> k) & 1 == 1


@njit(cache=True, inline="always")
def points(held: int) -> int:
    """Prestige from the points trading post: 1 per trading post held, once it is held."""
    if (held >> TP_POINTS) & 1 == 0:
        return 0
    n = 0
    for k in range(5):
        n += (held >> k) & 1
    return n


@njit(cache=True, inline="always")
def gold_weight(s: np.ndarray, p: int) -> int:
    """Gems one gold token pays for: 2 with the "gold counts double" post, else 1."""
    return 2 if has(s, p, TP_GOLD_DOUBLE) else 1


@njit(cache=True)
def take(s: np.ndarray, p: int, po: int, k: int) -> None:
    before = points(s[TP_HELD + p])
    s[TP_HELD + p] |= 1 << k
    s[po + P_PRESTIGE] += points(s[TP_HELD + p]) - before


@njit(cache=True, inline="always")
def after_take_two(s: np.ndarray, p: int, colour: int) -> None:
    """Taking 2 of ``colour`` with the extra-token post owes 1 token of another colour."""
    if has(s, p, TP_POWER_EXTRA_TOKEN):
        s[PD_EXTRA_EXCL] = colour


@njit(cache=True, inline="always")
def after_purchase(s: np.ndarray, p: int) -> None:
    """Every purchase (main action or conquest) with the token post owes 1 token."""
    if has(s, p, TP_TOKEN_AFTER_BUY):
        s[PD_TP_TOKEN] = 1


@njit(cache=True)
def reserve_blind(s: np.ndarray, p: int, po: int, d: int) -> None:
    """Blind reserve from deck ``d``; with the draw-two post and 2+ cards, draw two and wait for the choice."""
    if has(s, p, TP_DRAW_TWO) and s[deck_count_addr(d)] >= 2:
        s[PD_DRAWN0] = draw_from(s, d)
        s[PD_DRAWN1] = draw_from(s, d)
        s[PD_DRAWN_DECK] = d
    else:
        reserve(s, po, draw_from(s, d), True)


@njit(cache=True, inline="always")
def drawn_phase(s: np.ndarray) -> int:
    """The draw-two choice, the first pending effect of a turn; -1 if none."""
    return PHASE_KEEP_DRAWN_CARD if s[PD_DRAWN0] >= 0 else -1


@njit(cache=True, inline="always")
def pending_phase(s: np.ndarray) -> int:
    """The token effects, after the Orient's (token after buying, then extra token); -1 if none."""
    if s[PD_TP_TOKEN] != 0:
        return PHASE_TRADING_POST_TOKEN
    if s[PD_EXTRA_EXCL] >= 0:
        return PHASE_TRADING_POST_EXTRA
    return -1


@njit(cache=True)
def reason(s: np.ndarray, a: int, p: int, po: int, phase: int) -> int:
    """Legality of an id of this module's blocks in its own phase (the caller checked the module is on
    and that ``a`` belongs to ``phase``'s block)."""
    if phase == PHASE_TRADING_POST_CHOICE:
        k = a - CHOOSE_TRADING_POST
        if has(s, p, k):
            return R_ALREADY_HELD
        if not meets_req(s, po, TRADING_POST_REQ[k]):
            return R_REQUIREMENT_NOT_MET
        return OK
    if phase == PHASE_TRADING_POST_TOKEN:
        return OK if s[BANK + a - TP_TOKEN] > 0 else R_COLOUR_EMPTY
    if phase == PHASE_TRADING_POST_EXTRA:
        c = a - TP_EXTRA_TOKEN
        if c == s[PD_EXTRA_EXCL]:
            return R_NOT_AN_OPTION
        return OK if s[BANK + c] > 0 else R_COLOUR_EMPTY
    return OK  # keep_drawn_card: either drawn card


@njit(cache=True)
def resolve(s: np.ndarray, a: int, po: int, phase: int) -> None:
    """Apply the answer to a pending token or draw-two decision."""
    if phase == PHASE_KEEP_DRAWN_CARD:
        k = a - KEEP_DRAWN
        kept = s[PD_DRAWN0 + k]
        other = s[PD_DRAWN1 - k]
        s[PD_DRAWN0] = -1
        s[PD_DRAWN1] = -1
        reserve(s, po, kept, True)
        put_bottom(s, s[PD_DRAWN_DECK], other)
        s[PD_DRAWN_DECK] = -1
        return
    c = (a - TP_TOKEN) if phase == PHASE_TRADING_POST_TOKEN else (a - TP_EXTRA_TOKEN)
    s[BANK + c] -= 1
    s[po + P_TOKENS + c] += 1
    if phase == PHASE_TRADING_POST_TOKEN:
        s[PD_TP_TOKEN] = 0
    else:
        s[PD_EXTRA_EXCL] = -1


@njit(cache=True)
def drop(s: np.ndarray, phase: int) -> None:
    """A token effect with no colour left in the bank lapses."""
    if phase == PHASE_TRADING_POST_TOKEN:
        s[PD_TP_TOKEN] = 0
    elif phase == PHASE_TRADING_POST_EXTRA:
        s[PD_EXTRA_EXCL] = -1


@njit(cache=True, inline="always")
def end_of_turn(s: np.ndarray, p: int, po: int) -> bool:
    """The trading-post stage: take the one post that qualifies; True when several do (a choice)."""
    count = 0
    only = -1
    for k in range(5):
        if not has(s, p, k) and meets_req(s, po, TRADING_POST_REQ[k]):
            count += 1
            only = k
    if count > 1:
        s[PHASE] = PHASE_TRADING_POST_CHOICE
        return True
    if count == 1:
        take(s, p, po, only)
    return False


@njit(cache=True, inline="always")
def observe_seat(s: np.ndarray, p: int, out: np.ndarray, at: int) -> None:
    """``mseat[k].trading_posts``: the 5 tiles the seat holds."""
    for k in range(5):
        out[at + k] = (s[TP_HELD + p] >> k) & 1


@njit(cache=True, inline="always")
def observe(s: np.ndarray, seat: int, out: np.ndarray) -> None:
    """``pending_drawn_cards`` (only their owner sees them; the others see two hidden cards of that
    level, and whether they came from an Orient deck) and ``pending_excluded_colour``."""
    if s[PD_DRAWN0] >= 0:
        for k in range(2):
            off = O_PDRAWN + k * FULL_CARD_DIM
            card = s[PD_DRAWN0 + k]
            if seat == s[CURRENT]:
                put_full_card(s, out, off, card)
            else:
                lvl = s[PD_DRAWN_DECK] % 3
                for i in range(CARD_DIM):
                    out[off + i] = HIDDEN_CARD_TABLE[lvl, i]
                out[off + CARD_DIM] = 1.0 if s[PD_DRAWN_DECK] >= 3 else 0.0
    if s[PD_EXTRA_EXCL] >= 0:
        out[O_PEXCL + s[PD_EXTRA_EXCL]] = 1.0


def describe(name: str, i: int, state: np.ndarray | None, card_words) -> str:
    """Words for this module's ids."""
    if name == "choose_trading_post":
        return f"take trading post {i + 1} ({TRADING_POSTS[i]})"
    if name == "trading_post_token":
        return f"trading post: take 1 {COLOURS[i]} after buying"
    if name == "trading_post_extra_token":
        return f"trading post: take 1 extra {COLOURS[i]}"
    text = f"keep the {'first' if i == 0 else 'second'} drawn card"
    if state is not None and len(state) > PD_DRAWN0:
        card = int(state[PD_DRAWN0 + i])
        if card >= 0:
            text += f" ({card_words(card)})"
    return text


def invariants(s: np.ndarray, n: int, mods: int) -> list[str]:
    """Trading-post bitmasks are valid and absent seats hold none; the draw-two record is whole."""
    problems: list[str] = []
    for q in range(MAX_PLAYERS):
        if not 0 <= s[TP_HELD + q] < 1 << len(TRADING_POSTS):
            problems.append(f"player {q}: invalid trading-post bitmask")
    for q in range(n, MAX_PLAYERS):
        if s[TP_HELD + q]:
            problems.append(f"absent seat {q} holds trading posts")
    if (s[PD_DRAWN0] >= 0) != (s[PD_DRAWN_DECK] >= 0) or (s[PD_DRAWN0] >= 0) != (s[PD_DRAWN1] >= 0):
        problems.append("draw-two pending record incomplete")
    return problems
