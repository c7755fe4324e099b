"""The Orient (``"orient"``): 30 extra cards with effects, in their own market row.

Rules (docs/rules.md 7.3), as this engine plays them:

* Card ids 90-119 (``data/orient_cards.csv`` order: 90-99 level 1, 100-109
  level 2, 110-119 level 3). 2 Orient cards face up per level beside the 4
  base cards; a bought, reserved or free-taken card is replaced from its own
  deck (base or Orient); an empty deck leaves the slot empty. New main
  actions: ``reserve_orient_market``, ``reserve_orient_deck``,
  ``buy_orient_market``; reserved Orient cards are bought with the base
  ``buy_reserved`` ids. The three ``reserve_noble`` cards are ordinary cards.
* **Double gold** (colourless, no bonus). **Engine decision:** spending it is
  a separate action: ``buy_market_double_gold`` (market slot 0-17),
  ``buy_reserved_double_gold`` and conquest option 2. It is legal when the
  player holds a double-gold card and the purchase needs gold after coloured
  tokens (virtual gold is spent like gold: only for a shortfall), at most one
  card per purchase (the rulebook discards "this card"). Payment
  (:func:`splendor_env.board.pay`): the 2 virtual gold go first to the
  shortfall left after coloured tokens, then replace coloured tokens (colour
  order, 1 token per virtual gold, 2 with "gold counts double"), and real gold
  pays only the rest, so no token the purchase does not need is spent (owing
  3 white with 2 white, the player pays 1 white and the card); virtual gold
  still unused is lost. The card goes to the box (it no longer counts as a
  purchased card); the player's double-gold cards are alike, the lowest id
  is spent.
* **Pair**: buyable only by a player with at least one bonus. Right after the
  purchase the player picks the host with ``pair_target`` (by card id: any of
  their cards with a colour of its own, so not a pair or double-gold card);
  it adds 1 bonus of the host's colour for the rest of the game.
* **Pair + free level 1**: the pair first, then ``free_card`` (by market slot):
  any face-up level-1 card, base or Orient, not under an opponent's
  stronghold. **Engine decision:** taking the free card is compulsory when one
  can be taken; it is not a purchase (no payment, no trading-post token, no
  stronghold action of its own); its own effect applies (a pair card taken
  free asks for its host, a pair + free level 1 card chains); the emptied
  slots are refilled after all the turn's effects, before the conquest offer.
* **Double bonus**: 2 bonuses of its colour, one card for everything else.
* **Free level 2**: as above, with a face-up level-2 card.
* **Sacrifice**: paid with no tokens or bonuses: legal when the player holds
  at least 2 cards of the colour shown. **Engine decision (reading the
  symbol):** "cards of the colour" counts cards, not bonuses: a double-bonus
  card is one card, a pair card attached to that colour counts as one. The
  discards are decisions, one card at a time (``sacrifice_discard``, by card
  id): pair cards attached to that colour first, then the colour's other
  cards; the engine discards alone when the candidates are no more than the
  cards still owed. Discarded cards go to the box; nobles and trading posts
  already taken are kept.

Owns (rows tagged ``"orient"`` in :mod:`splendor_env.layout`): state
``OMARKET``, ``ODECK_COUNT``, ``ODECK``, ``OCARD_OWNER``, ``PAIR_HOST``,
``PD_SAC_CARD``, ``PD_SAC_LEFT``, ``PD_PAIR``, ``PD_FREE_LEVEL``; phases
``pair_target``, ``free_card``, ``sacrifice_choice``; the Orient main-action
blocks and ``pair_target``, ``free_card``, ``sacrifice_discard``; observation
``mseat[k].double_gold_cards``, ``pair_bonuses``, ``reserved_extras``,
``orient_market_cards``, ``orient_deck_sizes``, ``cards_in_box``,
``pending_card``, ``pending_free_level``, ``pending_sacrifice_left``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..action_ids import (  # the module's action ids
    PAIR_TARGET,
    SACRIFICE,
)
from ..board import buying_power, has_bonus, reserved_count, short_units
from ..card_features import ORIENT_TABLE, put_full_card
from ..cards import (
    ALL_CARD_BONUS,
    ALL_CARD_COLOUR,
    ALL_CARD_EFFECT,
    ALL_CARD_POINTS,
    ALL_CARD_SAC_COLOUR,
    ALL_CARD_SAC_COUNT,
    EFFECT_DOUBLE_GOLD,
    EFFECT_FREE_L2,
    EFFECT_PAIR,
    EFFECT_PAIR_FREE_L1,
    EFFECT_SACRIFICE,
    NUM_ALL_CARDS,
    NUM_CARDS,
    NUM_ORIENT,
    ORIENT_LEVEL_SIZE,
    ORIENT_OFFSETS,
    card_summary,
)
from ..layout import FULL_CARD_DIM, OBS_OFFSETS, ORIENT_DIM
from ..reasons import (
    OK,
    R_CANNOT_AFFORD,
    R_CANNOT_SACRIFICE,
    R_DOUBLE_GOLD_NOT_NEEDED,
    R_EMPTY_SLOT,
    R_NO_DOUBLE_GOLD,
    R_NO_PAIR_TARGET,
    R_NOT_AN_OPTION,
    R_OCCUPIED,
)
from ..rng import shuffle
from ..state import (
    ALL_SLOTS,
    BOX,
    DECK_COUNT,
    MAX_RESERVED,
    N_PLAYERS,
    OCARD_OWNER,
    ODECK,
    ODECK_COUNT,
    OMARKET,
    ORIENT_SLOTS,
    P_BONUS,
    P_CARDS,
    P_PRESTIGE,
    P_RESERVED,
    P_RESERVED_BLIND,
    P_TOKENS,
    PAIR_HOST,
    PD_DRAWN0,
    PD_DRAWN1,
    PD_FREE_LEVEL,
    PD_PAIR,
    PD_SAC_CARD,
    PD_SAC_LEFT,
    PHASE_FREE_CARD,
    PHASE_PAIR_TARGET,
    PHASE_SACRIFICE_CHOICE,
    draw_from,
    owner_addr,
    player_offset,
    slot_addr,
    slot_level,
)

#: Market slot of the first Orient card (0-11 are the base market).
FIRST_ORIENT_SLOT = 12
VIRTUAL_GOLD = 2  # gold units a spent double-gold card pays

_O = {name: off for name, (off, _) in OBS_OFFSETS.items()}
O_OMARKET = _O["orient_market_cards"]
O_ODECKS = _O["orient_deck_sizes"]
O_BOX = _O["cards_in_box"]
O_PCARD = _O["pending_card"]
O_PFREE = _O["pending_free_level"]
O_PSAC = _O["pending_sacrifice_left"]
O_CARDS_COLOUR = _O["cards_per_colour"]


@njit(cache=True)
def setup(s: np.ndarray, rng: np.ndarray) -> None:
    """Shuffle the three Orient decks and deal 2 face up per level."""
    for lvl in range(3):
        base = ODECK + lvl * ORIENT_LEVEL_SIZE
        for i in range(ORIENT_LEVEL_SIZE):
            s[base + i] = ORIENT_OFFSETS[lvl] + i
        shuffle(s[base : base + ORIENT_LEVEL_SIZE], ORIENT_LEVEL_SIZE, rng)
        s[ODECK_COUNT + lvl] = ORIENT_LEVEL_SIZE
        for k in range(ORIENT_SLOTS):
            s[OMARKET + lvl * ORIENT_SLOTS + k] = draw_from(s, 3 + lvl)


# -- facts about cards --------------------------------------------------------


@njit(cache=True, inline="always")
def is_pair(card: int) -> bool:
    e = ALL_CARD_EFFECT[card]
    return e == EFFECT_PAIR or e == EFFECT_PAIR_FREE_L1


@njit(cache=True, inline="always")
def owner(s: np.ndarray, card: int) -> int:
    return s[owner_addr(card)]


#: Orient cards (index from the first Orient card, ascending) that are double-gold cards, and
#: those that give two bonuses: the only ones the purchase checks look up by owner.
DOUBLE_GOLD_INDEX = np.array(
    [i for i in range(ORIENT_LEVEL_SIZE) if ALL_CARD_EFFECT[NUM_CARDS + i] == EFFECT_DOUBLE_GOLD],
    dtype=np.int64,
)
DOUBLE_BONUS_INDEX = np.array(
    [i for i in range(NUM_ORIENT) if ALL_CARD_BONUS[NUM_CARDS + i] > 1], dtype=np.int64
)
#: Orient cards (index from the first Orient card) that are pair cards.
PAIR_INDEX = np.array(
    [i for i in range(NUM_ORIENT) if ALL_CARD_EFFECT[NUM_CARDS + i] in (EFFECT_PAIR, EFFECT_PAIR_FREE_L1)],
    dtype=np.int64,
)


@njit(cache=True, inline="always")
def double_gold_card(s: np.ndarray, p: int) -> int:
    """The lowest-id double-gold card seat ``p`` holds, or -1 (they are all alike)."""
    for i in DOUBLE_GOLD_INDEX:
        if s[OCARD_OWNER + i] == p:
            return NUM_CARDS + i
    return -1


@njit(cache=True, inline="always")
def card_colour_now(s: np.ndarray, card: int) -> int:
    """Colour a held card counts as: its own, a pair card's host colour, or -1."""
    c = ALL_CARD_COLOUR[card]
    if c >= 0 or card < NUM_CARDS:
        return c
    host = s[PAIR_HOST + card - NUM_CARDS]
    return ALL_CARD_COLOUR[host] if host >= 0 else -1


@njit(cache=True)
def sacrifice_counts(s: np.ndarray, p: int, colour: int) -> tuple[int, int]:
    """(pair cards attached to ``colour`` cards, other cards of ``colour``) held by seat ``p``."""
    pairs = 0
    others = 0
    for card in range(NUM_ALL_CARDS):
        if owner(s, card) != p:
            continue
        if is_pair(card):
            if card_colour_now(s, card) == colour:
                pairs += 1
        elif ALL_CARD_COLOUR[card] == colour:
            others += 1
    return pairs, others


@njit(cache=True, inline="always")
def cards_held(s: np.ndarray, p: int, po: int) -> tuple[int, int, int, int, int]:
    """Cards of each colour seat ``p`` holds, as a sacrifice counts them (pair cards attached to
    that colour included, a double-bonus card once): the bonuses less the second bonus of each
    double-bonus card held, so only those few cards are looked at."""
    n0 = s[po + P_BONUS]
    n1 = s[po + P_BONUS + 1]
    n2 = s[po + P_BONUS + 2]
    n3 = s[po + P_BONUS + 3]
    n4 = s[po + P_BONUS + 4]
    for i in DOUBLE_BONUS_INDEX:
        if s[OCARD_OWNER + i] == p:
            card = NUM_CARDS + i
            extra = ALL_CARD_BONUS[card] - 1
            colour = ALL_CARD_COLOUR[card]
            n0 -= extra if colour == 0 else 0
            n1 -= extra if colour == 1 else 0
            n2 -= extra if colour == 2 else 0
            n3 -= extra if colour == 3 else 0
            n4 -= extra if colour == 4 else 0
    return n0, n1, n2, n3, n4


@njit(cache=True, inline="always")
def cards_of_colour(s: np.ndarray, p: int, po: int, colour: int) -> int:
    """Cards of ``colour`` seat ``p`` holds, as a sacrifice counts them (see :func:`cards_held`)."""
    return cards_held(s, p, po)[colour]


# -- legality -------------------------------------------------------------------


@njit(cache=True, inline="always")
def purchase_reasons(
    card: int,
    w: int,
    has_dg: bool,
    bonus: bool,
    power: tuple[int, int, int, int, int],
    gold: int,
    held: tuple[int, int, int, int, int],
) -> tuple[int, int]:
    """The purchase rule of a module game: (reason code paying with tokens, reason code spending a
    double-gold card), from the buyer's facts alone, so the mask reads them once for all cards:
    ``w`` gems per gold, whether a double-gold card is held (``has_dg``), whether a card with a
    bonus is owned (``bonus``), bonuses plus tokens per colour (``power``, see
    :func:`splendor_env.board.buying_power`), gold tokens, and cards held per colour as a sacrifice
    counts them (``held``, see :func:`cards_held`)."""
    eff = ALL_CARD_EFFECT[card]
    if eff == EFFECT_SACRIFICE:
        if held[ALL_CARD_SAC_COLOUR[card]] < ALL_CARD_SAC_COUNT[card]:
            return R_CANNOT_SACRIFICE, R_DOUBLE_GOLD_NOT_NEEDED
        return OK, R_DOUBLE_GOLD_NOT_NEEDED
    if (eff == EFFECT_PAIR or eff == EFFECT_PAIR_FREE_L1) and not bonus:
        return R_NO_PAIR_TARGET, R_NO_PAIR_TARGET
    units = short_units(power, card, w)
    plain = R_CANNOT_AFFORD if units > gold else OK
    if not has_dg:
        return plain, R_NO_DOUBLE_GOLD
    if units == 0:
        return plain, R_DOUBLE_GOLD_NOT_NEEDED
    if units > gold + VIRTUAL_GOLD:
        return plain, R_CANNOT_AFFORD
    return plain, OK


@njit(cache=True, inline="always")
def buy_reason(
    s: np.ndarray, p: int, po: int, card: int, use_dg: bool, w: int, has_dg: bool, bonus: bool
) -> int:
    """Whether seat ``p`` may buy ``card`` in a module game (:func:`purchase_reasons`, reading the
    buyer's facts from the state); ``use_dg``: spending a double-gold card."""
    plain, dg = purchase_reasons(
        card, w, has_dg, bonus, buying_power(s, po), s[po + P_TOKENS + 5], cards_held(s, p, po)
    )
    return dg if use_dg else plain


@njit(cache=True)
def pair_target_reason(s: np.ndarray, a: int, p: int) -> int:
    t = a - PAIR_TARGET
    if owner(s, t) != p or ALL_CARD_COLOUR[t] < 0:
        return R_NOT_AN_OPTION
    return OK


@njit(cache=True, inline="always")
def free_card_reason(s: np.ndarray, po: int, m: int, occupied: bool) -> int:
    """A free card: a face-up card of the level owed, not under an opponent's stronghold (``occupied``)."""
    card = s[slot_addr(m)]
    if card < 0:
        return R_EMPTY_SLOT
    if slot_level(m) != s[PD_FREE_LEVEL]:
        return R_NOT_AN_OPTION
    if occupied:
        return R_OCCUPIED
    if is_pair(card) and not has_bonus(s, po):
        return R_NO_PAIR_TARGET
    return OK


@njit(cache=True)
def sacrifice_reason(s: np.ndarray, p: int, card: int) -> int:
    """A discard for the pending sacrifice: pair cards on that colour first, then the colour's cards."""
    if owner(s, card) != p or card == s[PD_SAC_CARD]:
        return R_NOT_AN_OPTION
    colour = ALL_CARD_SAC_COLOUR[s[PD_SAC_CARD]]
    pairs, _ = sacrifice_counts(s, p, colour)
    if is_pair(card):
        return OK if card_colour_now(s, card) == colour else R_NOT_AN_OPTION
    if pairs > 0 or ALL_CARD_COLOUR[card] != colour:
        return R_NOT_AN_OPTION
    return OK


@njit(cache=True, inline="always")
def decision_mask(s: np.ndarray, phase: int, p: int, mask: np.ndarray) -> int:
    """The sacrifice and pair-host candidates, walking only the player's cards; -1 for another phase."""
    n = 0
    if phase == PHASE_SACRIFICE_CHOICE:
        colour = ALL_CARD_SAC_COLOUR[s[PD_SAC_CARD]]
        pairs, _ = sacrifice_counts(s, p, colour)
        for card in range(NUM_ALL_CARDS):
            if owner(s, card) != p or card == s[PD_SAC_CARD]:
                continue
            if (
                card_colour_now(s, card) == colour
                if is_pair(card)
                else (pairs == 0 and ALL_CARD_COLOUR[card] == colour)
            ):
                mask[SACRIFICE + card] = 1
                n += 1
        return n
    if phase == PHASE_PAIR_TARGET:
        for card in range(NUM_ALL_CARDS):
            if ALL_CARD_COLOUR[card] >= 0 and owner(s, card) == p:
                mask[PAIR_TARGET + card] = 1
                n += 1
        return n
    return -1


# -- effects --------------------------------------------------------------------


@njit(cache=True, inline="always")
def on_gain(s: np.ndarray, card: int) -> None:
    """A card just gained records what its effect owes: a host for a pair, a free card."""
    eff = ALL_CARD_EFFECT[card]
    if eff == EFFECT_PAIR:
        s[PD_PAIR] = card
    elif eff == EFFECT_PAIR_FREE_L1:
        s[PD_PAIR] = card
        s[PD_FREE_LEVEL] = 0
    elif eff == EFFECT_FREE_L2:
        s[PD_FREE_LEVEL] = 1


@njit(cache=True)
def discard_to_box(s: np.ndarray, p: int, po: int, card: int) -> None:
    """A held card goes back to the box (sacrificed, or a spent double-gold card)."""
    s[owner_addr(card)] = BOX
    s[po + P_CARDS] -= 1
    s[po + P_PRESTIGE] -= ALL_CARD_POINTS[card]
    colour = card_colour_now(s, card)
    if colour >= 0:
        s[po + P_BONUS + colour] -= 1 if is_pair(card) else ALL_CARD_BONUS[card]
    if card >= NUM_CARDS:
        s[PAIR_HOST + card - NUM_CARDS] = -1


@njit(cache=True)
def is_sacrifice(card: int) -> bool:
    return ALL_CARD_EFFECT[card] == EFFECT_SACRIFICE


@njit(cache=True)
def start_sacrifice(s: np.ndarray, card: int) -> None:
    """A sacrifice card is paid with cards: the discards come as decisions."""
    s[PD_SAC_CARD] = card
    s[PD_SAC_LEFT] = ALL_CARD_SAC_COUNT[card]


@njit(cache=True)
def spend_double_gold(s: np.ndarray, p: int, po: int) -> int:
    """Box the player's (lowest-id) double-gold card; returns the virtual gold it pays."""
    discard_to_box(s, p, po, double_gold_card(s, p))
    return VIRTUAL_GOLD


@njit(cache=True, inline="always")
def pending_phase(s: np.ndarray) -> int:
    """The Orient's effects in rule order: sacrifice discards, pair host, free card; -1 if none."""
    if s[PD_SAC_LEFT] > 0:
        return PHASE_SACRIFICE_CHOICE
    if s[PD_PAIR] >= 0:
        return PHASE_PAIR_TARGET
    if s[PD_FREE_LEVEL] >= 0:
        return PHASE_FREE_CARD
    return -1


@njit(cache=True)
def resolve(s: np.ndarray, a: int, p: int, po: int, phase: int) -> None:
    """Apply a sacrifice discard or a pair host (the free card is taken by the turn pipeline)."""
    if phase == PHASE_SACRIFICE_CHOICE:
        discard_to_box(s, p, po, a - SACRIFICE)
        s[PD_SAC_LEFT] -= 1
        if s[PD_SAC_LEFT] == 0:
            s[PD_SAC_CARD] = -1
    else:
        host = a - PAIR_TARGET
        s[PAIR_HOST + s[PD_PAIR] - NUM_CARDS] = host
        s[po + P_BONUS + ALL_CARD_COLOUR[host]] += 1
        s[PD_PAIR] = -1


@njit(cache=True)
def drop(s: np.ndarray, phase: int) -> None:
    """An Orient effect with no possible option lapses."""
    if phase == PHASE_FREE_CARD:
        s[PD_FREE_LEVEL] = -1
    elif phase == PHASE_PAIR_TARGET:
        s[PD_PAIR] = -1
    elif phase == PHASE_SACRIFICE_CHOICE:
        s[PD_SAC_LEFT] = 0
        s[PD_SAC_CARD] = -1


# -- observation ----------------------------------------------------------------


@njit(cache=True, inline="always")
def _seat_block(p: int, seat: int, n: int) -> int:
    """Observer-relative seat of seat ``p`` (0 = the observer)."""
    return p - seat if p >= seat else p - seat + n


@njit(cache=True, inline="always")
def observe_owned(
    s: np.ndarray, seat: int, n: int, out: np.ndarray, mseat0: int, seat_dim: int, dg_off: int, pair_off: int
) -> None:
    """Every seat's double-gold cards and pair bonuses, and its double-bonus cards counted once in
    ``cards_per_colour`` (which already holds the bonuses). Only the 17 Orient cards that change
    these are looked at (double gold, double bonus, pair), not all 30."""
    for i in DOUBLE_GOLD_INDEX:
        p = s[OCARD_OWNER + i]
        if p >= 0:
            out[mseat0 + _seat_block(p, seat, n) * seat_dim + dg_off] += 1.0
    for i in DOUBLE_BONUS_INDEX:
        p = s[OCARD_OWNER + i]
        if p >= 0:  # one card, two bonuses
            card = NUM_CARDS + i
            out[O_CARDS_COLOUR + _seat_block(p, seat, n) * 5 + ALL_CARD_COLOUR[card]] -= (
                ALL_CARD_BONUS[card] - 1
            )
    for i in PAIR_INDEX:
        host = s[PAIR_HOST + i]
        if host >= 0:  # attached, so held by the pair card's owner
            mo = mseat0 + _seat_block(s[OCARD_OWNER + i], seat, n) * seat_dim
            out[mo + pair_off + ALL_CARD_COLOUR[host]] += 1.0


@njit(cache=True, inline="always")
def observe_reserved(s: np.ndarray, po: int, rel: int, out: np.ndarray, res_at: int) -> None:
    """The Orient extras of a seat's reserved cards; another seat's blind Orient reserve shows only
    that it came from an Orient deck."""
    for r in range(MAX_RESERVED):
        card = s[po + P_RESERVED + r]
        if card < NUM_CARDS:
            continue
        off = res_at + r * ORIENT_DIM
        if s[po + P_RESERVED_BLIND + r] == 1 and rel != 0:
            out[off] = 1.0
        else:
            for i in range(ORIENT_DIM):
                out[off + i] = ORIENT_TABLE[card, i]


@njit(cache=True, inline="always")
def cards_in_box(s: np.ndarray) -> int:
    """Cards returned to the box, counted from the places every other card is in: each of the 120
    cards is in exactly one place (a deck, a market slot, the draw-two limbo, a reserve, a seat's
    purchased cards, or the box; ``invariants`` checks it), so a few counters replace reading all
    120 owner entries, which an observation would otherwise pull into the cache every step."""
    placed = 0
    for lvl in range(3):
        placed += s[DECK_COUNT + lvl] + s[ODECK_COUNT + lvl]
    for m in range(ALL_SLOTS):
        placed += s[slot_addr(m)] >= 0
    placed += (s[PD_DRAWN0] >= 0) + (s[PD_DRAWN1] >= 0)
    for p in range(s[N_PLAYERS]):
        po = player_offset(p)
        placed += s[po + P_CARDS] + reserved_count(s, po)
    return NUM_ALL_CARDS - placed


@njit(cache=True, inline="always")
def observe(s: np.ndarray, out: np.ndarray) -> None:
    """The Orient market and decks, the boxed cards, and the Orient's pending effects."""
    for slot in range(3 * ORIENT_SLOTS):
        card = s[OMARKET + slot]
        if card >= 0:
            put_full_card(s, out, O_OMARKET + slot * FULL_CARD_DIM, card)
    for lvl in range(3):
        out[O_ODECKS + lvl] = s[ODECK_COUNT + lvl]
    out[O_BOX] = cards_in_box(s)
    pending = s[PD_PAIR] if s[PD_PAIR] >= 0 else s[PD_SAC_CARD]
    if pending >= 0:
        put_full_card(s, out, O_PCARD, pending)
    if s[PD_FREE_LEVEL] >= 0:
        out[O_PFREE + s[PD_FREE_LEVEL]] = 1.0
    out[O_PSAC] = s[PD_SAC_LEFT]


def describe(name: str, i: int, slot_text) -> str:
    """Words for this module's ids; ``slot_text(m)`` names market slot ``m`` and its card."""
    if name in ("reserve_orient_market", "buy_orient_market"):
        verb = "reserve" if name.startswith("reserve") else "buy"
        return f"{verb} {slot_text(FIRST_ORIENT_SLOT + i)}"
    if name == "reserve_orient_deck":
        return f"reserve top of Orient L{i + 1} deck (blind)"
    if name == "buy_market_double_gold":
        return f"buy {slot_text(i)} spending a double-gold card"
    if name == "pair_target":
        return f"attach the pair card to card {i} ({card_summary(i)})"
    if name == "free_card":
        return f"take {slot_text(i)} for free"
    return f"sacrifice card {i} ({card_summary(i)})"


def invariants(s: np.ndarray, n: int, mods: int, owners: np.ndarray) -> list[str]:
    """Pair hosts are coloured cards of the pair card's owner; the pending sacrifice and pair fields are in range."""
    problems: list[str] = []
    for i in range(NUM_ORIENT):
        host = int(s[PAIR_HOST + i])
        card = NUM_CARDS + i
        if host < 0:
            continue
        if ALL_CARD_EFFECT[card] not in (EFFECT_PAIR, EFFECT_PAIR_FREE_L1):
            problems.append(f"card {card} is not a pair card but has a host")
        elif not 0 <= host < NUM_ALL_CARDS or owners[card] < 0 or owners[host] != owners[card]:
            problems.append(f"pair card {card} attached to card {host} of another owner")
        elif ALL_CARD_COLOUR[host] < 0:
            problems.append(f"pair card {card} attached to card {host} that has no colour")
    return problems
