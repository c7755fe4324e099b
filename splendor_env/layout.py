"""Every game's layout declared as data: state fields, phases, action blocks, observation sections.

Why one table per kind: offsets, ids and totals are derived here by adding up
sizes, so no count is ever written by hand, and every row names its owner
(``"base"``, ``"modules"`` for what all modules share, or a module name), so a
module's pieces can be listed and checked in one place. Rows are only ever
appended: a base-game offset, an action id or an observation offset never
moves when a module is added.

This file holds data only (no rule, no numba function): the state helpers,
the snapshots, the observation and the rules all read it, and it imports none
of them.
"""

from __future__ import annotations

from .cards import CITIES_ON_OFFER, EFFECTS, NUM_ALL_CARDS, NUM_CARDS, NUM_ORIENT, ORIENT_LEVEL_SIZE

MAX_PLAYERS = 4
MARKET_SLOTS = 4
MAX_RESERVED = 3
DECK_CAPACITY = 40
NOBLE_SLOTS = MAX_PLAYERS + 1
ORIENT_SLOTS = 2
BASE_SLOTS = 3 * MARKET_SLOTS
ALL_SLOTS = BASE_SLOTS + 3 * ORIENT_SLOTS  # market slots 0-17 in the module ids

#: Module names accepted by ``modules=``; a module's bit in the MODULES field is 1 << its index.
MODULE_NAMES = ("cities", "trading_posts", "orient", "strongholds")
OWNERS = ("base", "modules") + MODULE_NAMES


def _offsets(rows: tuple[tuple, ...], start: int = 0) -> dict[str, tuple[int, int]]:
    """name -> (offset, size), adding sizes up in row order."""
    out: dict[str, tuple[int, int]] = {}
    at = start
    for name, size, owner, *_ in rows:
        assert owner in OWNERS, f"{name}: unknown owner {owner!r}"
        assert name not in out, f"{name} declared twice"
        out[name] = (at, size)
        at += size
    return out


# ---------------------------------------------------------------------------
# State: one flat int32 array per game. (name, size, owner, meaning)

#: Fields of one seat's block (relative to the block's start).
PLAYER_FIELDS: tuple[tuple[str, int, str, str], ...] = (
    ("P_TOKENS", 6, "base", "tokens held per colour (gold last)"),
    ("P_BONUS", 5, "base", "bonuses per colour from purchased cards (and attached pair cards)"),
    ("P_PRESTIGE", 1, "base", "prestige points"),
    ("P_CARDS", 1, "base", "purchased cards held"),
    ("P_NOBLES", 1, "base", "nobles taken"),
    ("P_RESERVED", MAX_RESERVED, "base", "reserved card ids, packed to the front, -1 when empty"),
    ("P_RESERVED_BLIND", MAX_RESERVED, "base", "1 where the reserved card was drawn blind from a deck"),
)
PLAYER_OFFSETS = _offsets(PLAYER_FIELDS)
PLAYER_SIZE = sum(row[1] for row in PLAYER_FIELDS)

STATE_FIELDS: tuple[tuple[str, int, str, str], ...] = (
    ("N_PLAYERS", 1, "base", "2, 3 or 4"),
    ("CURRENT", 1, "base", "seat on move"),
    ("PHASE", 1, "base", "the decision the seat on move faces (PHASES)"),
    ("TURN", 1, "base", "completed turns, all players together"),
    ("FINAL_ROUND", 1, "base", "1 once the last round has started"),
    ("PASSES", 1, "base", "consecutive pass turns"),
    ("MAX_TURNS", 1, "base", "turn cap; reaching it truncates the game"),
    ("MODULES", 1, "base", "bitmask of enabled Cities of Splendor modules (0 = base game)"),
    ("BANK", 6, "base", "tokens in the bank (white, blue, green, red, black, gold)"),
    ("MARKET", BASE_SLOTS, "base", "face-up card id per (level, slot), -1 when empty"),
    ("DECK_COUNT", 3, "base", "cards left in each level's deck"),
    ("DECK", 3 * DECK_CAPACITY, "base", "deck contents per level; the top card is at index count-1"),
    ("NOBLE_ID", NOBLE_SLOTS, "base", "noble id in each offer slot, -1 when unused"),
    ("NOBLE_OWNER", NOBLE_SLOTS, "base", "-1 while on offer, else the seat that took it"),
    ("CARD_OWNER", NUM_CARDS, "base", "owner of base card i: -1, a seat, or BOX (-2)"),
    ("OUTCOME", MAX_PLAYERS, "base", "set at game end: 1 for each winner"),
    ("PLAYERS", MAX_PLAYERS * PLAYER_SIZE, "base", "per seat: PLAYER_FIELDS"),
    # Module fields: present only in games with MODULES != 0, after the base layout.
    ("OMARKET", 3 * ORIENT_SLOTS, "orient", "Orient face-up card per (level, slot), -1 when empty"),
    ("ODECK_COUNT", 3, "orient", "cards left in each Orient deck"),
    ("ODECK", 3 * ORIENT_LEVEL_SIZE, "orient", "Orient decks, top card at index count-1"),
    ("OCARD_OWNER", NUM_ORIENT, "orient", "owner of Orient card 90+i: -1, a seat, or BOX (-2)"),
    ("PAIR_HOST", NUM_ORIENT, "orient", "for an attached pair card: the card it is attached to, else -1"),
    ("CITY_ID", CITIES_ON_OFFER, "cities", "cities on offer, -1 when none"),
    ("CITY_OWNER", CITIES_ON_OFFER, "cities", "the seat that claimed each city, -1"),
    ("TP_HELD", MAX_PLAYERS, "trading_posts", "per seat, bitmask of trading posts held"),
    ("SH_SUPPLY", MAX_PLAYERS, "strongholds", "per seat, strongholds in the supply"),
    ("SH_ON", ALL_SLOTS * MAX_PLAYERS, "strongholds", "strongholds per (market slot, seat)"),
    # The pending record: what is left to do in the current turn.
    ("PD_STAGE", 1, "modules", "where the turn is (STAGE_*): effects, token limit, nobles, ..."),
    ("PD_SAC_CARD", 1, "orient", "sacrifice card being bought, -1"),
    ("PD_SAC_LEFT", 1, "orient", "cards still to discard for it"),
    ("PD_PAIR", 1, "orient", "pair card waiting for its host, -1"),
    ("PD_FREE_LEVEL", 1, "orient", "level of the free card owed, -1"),
    ("PD_TP_TOKEN", 1, "trading_posts", "1 if the after-purchase trading-post token is owed"),
    ("PD_EXTRA_EXCL", 1, "trading_posts", "colour of the pair just taken when the extra token is owed, -1"),
    ("PD_SH", 1, "strongholds", "1 if a stronghold action is owed"),
    ("PD_REFILL", 1, "modules", "bitmask of market slots to refill"),
    ("PD_CONQ", 1, "strongholds", "1 once the conquest has been offered (or cannot be) this turn"),
    ("PD_DRAWN0", 1, "trading_posts", "first card drawn by the draw-two trading post, -1"),
    ("PD_DRAWN1", 1, "trading_posts", "second drawn card, -1"),
    ("PD_DRAWN_DECK", 1, "trading_posts", "the deck they came from (0-2 base, 3-5 Orient), -1"),
)
STATE_OFFSETS = _offsets(STATE_FIELDS)
#: Length of a base game's array, and of a game with any module.
STATE_SIZE = sum(row[1] for row in STATE_FIELDS if row[2] == "base")
STATE_SIZE_ALL = sum(row[1] for row in STATE_FIELDS)
assert all(STATE_OFFSETS[row[0]][0] < STATE_SIZE for row in STATE_FIELDS if row[2] == "base")
PENDING = STATE_OFFSETS["PD_STAGE"][0]
PENDING_SIZE = sum(1 for row in STATE_FIELDS if row[0].startswith("PD_"))

# ---------------------------------------------------------------------------
# Phases: what kind of decision the seat on move faces. (name, owner, blocks that answer it)

PHASES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("main", "base", ()),
    ("discard", "base", ("discard",)),
    ("noble", "base", ("choose_noble",)),
    ("game_over", "base", ()),
    ("truncated", "base", ()),
    ("trading_post_choice", "trading_posts", ("choose_trading_post",)),
    ("trading_post_token", "trading_posts", ("trading_post_token",)),
    ("trading_post_extra_token", "trading_posts", ("trading_post_extra_token",)),
    ("keep_drawn_card", "trading_posts", ("keep_drawn_card",)),
    ("pair_target", "orient", ("pair_target",)),
    ("free_card", "orient", ("free_card",)),
    ("sacrifice_choice", "orient", ("sacrifice_discard",)),
    ("stronghold", "strongholds", ("stronghold_place", "stronghold_move", "stronghold_remove")),
    ("conquest", "strongholds", ("conquest",)),
    ("city", "cities", ("choose_city",)),
)
PHASE_NAMES = tuple(name for name, _, _ in PHASES)
NUM_PHASES = len(PHASES)

# ---------------------------------------------------------------------------
# Action blocks: one fixed Discrete space; the mask says which ids are legal now.

ACTION_BLOCKS: tuple[tuple[str, int, str], ...] = (
    ("take_3_different", 10, "base"),
    ("take_2_different", 10, "base"),
    ("take_1", 5, "base"),
    ("take_2_same", 5, "base"),
    ("reserve_market", BASE_SLOTS, "base"),
    ("reserve_deck", 3, "base"),
    ("buy_market", BASE_SLOTS, "base"),
    ("buy_reserved", MAX_RESERVED, "base"),
    ("discard", 6, "base"),
    ("choose_noble", NOBLE_SLOTS, "base"),
    ("pass", 1, "base"),
    ("choose_city", CITIES_ON_OFFER, "cities"),
    ("choose_trading_post", 5, "trading_posts"),
    ("trading_post_token", 5, "trading_posts"),
    ("trading_post_extra_token", 5, "trading_posts"),
    ("keep_drawn_card", 2, "trading_posts"),
    ("reserve_orient_market", 3 * ORIENT_SLOTS, "orient"),
    ("reserve_orient_deck", 3, "orient"),
    ("buy_orient_market", 3 * ORIENT_SLOTS, "orient"),
    ("buy_market_double_gold", ALL_SLOTS, "orient"),
    ("buy_reserved_double_gold", MAX_RESERVED, "orient"),
    ("pair_target", NUM_ALL_CARDS, "orient"),
    ("free_card", ALL_SLOTS, "orient"),
    ("sacrifice_discard", NUM_ALL_CARDS, "orient"),
    ("stronghold_place", ALL_SLOTS, "strongholds"),
    ("stronghold_move", ALL_SLOTS * ALL_SLOTS, "strongholds"),
    ("stronghold_remove", ALL_SLOTS, "strongholds"),
    ("conquest", 3, "strongholds"),
)
ACTION_OFFSETS = _offsets(ACTION_BLOCKS)
NUM_ACTIONS = sum(size for _, size, owner in ACTION_BLOCKS if owner == "base")
NUM_ACTIONS_ALL = sum(size for _, size, _ in ACTION_BLOCKS)


def first_id(block: str) -> int:
    return ACTION_OFFSETS[block][0]


def phase_ids(phase: str) -> tuple[int, int]:
    """The id range [first, end) of the blocks answering a decision phase ((0, 0) for none)."""
    blocks = dict((name, b) for name, _, b in PHASES)[phase]
    if not blocks:
        return 0, 0
    first = ACTION_OFFSETS[blocks[0]][0]
    last, size = ACTION_OFFSETS[blocks[-1]]
    return first, last + size


# ---------------------------------------------------------------------------
# Observation sections (float32). Cards are CARD_FEATURES numbers; Orient cards in
# the module sections carry ORIENT_FEATURES after them.

CARD_FEATURES = (
    ("present", "blind", "level_1", "level_2", "level_3")
    + tuple(f"colour_{c}" for c in ("white", "blue", "green", "red", "black"))
    + ("points",)
    + tuple(f"cost_{c}" for c in ("white", "blue", "green", "red", "black"))
)
CARD_DIM = len(CARD_FEATURES)
ORIENT_FEATURES = (
    ("is_orient",)
    + tuple(f"effect_{e}" for e in EFFECTS[1:])
    + ("bonus_count",)
    + tuple(f"sacrifice_{c}" for c in ("white", "blue", "green", "red", "black"))
    + ("sacrifice_count",)
)
ORIENT_DIM = len(ORIENT_FEATURES)
FULL_CARD_DIM = CARD_DIM + ORIENT_DIM
CITY_DIM = 8  # present, prestige, requirement (5), same-colour count

#: One seat's block of the base observation (observer first, then turn order).
SEAT_SECTIONS: tuple[tuple[str, int, str], ...] = (
    ("present", 1, "base"),
    ("tokens", 6, "base"),
    ("bonuses", 5, "base"),
    ("prestige", 1, "base"),
    ("cards_purchased", 1, "base"),
    ("nobles", 1, "base"),
    ("reserved_count", 1, "base"),
    ("reserved_cards", MAX_RESERVED * CARD_DIM, "base"),
)
SEAT_DIM = sum(size for _, size, _ in SEAT_SECTIONS)
#: One seat's block of the module observation.
MODULE_SEAT_SECTIONS: tuple[tuple[str, int, str], ...] = (
    ("present", 1, "modules"),
    ("city", 1, "cities"),
    ("trading_posts", 5, "trading_posts"),
    ("stronghold_supply", 1, "strongholds"),
    ("double_gold_cards", 1, "orient"),
    ("pair_bonuses", 5, "orient"),
    ("reserved_extras", MAX_RESERVED * ORIENT_DIM, "orient"),
)
MODULE_SEAT_DIM = sum(size for _, size, _ in MODULE_SEAT_SECTIONS)
#: Phases shown in ``module_phase_onehot``: those of the four modules as first released. A new
#: module shows its phases in a section of its own, appended at the end, so no offset moves.
ONEHOT_MODULE_PHASES = tuple(name for name, owner, _ in PHASES if owner in MODULE_NAMES)

OBS_SECTIONS: tuple[tuple[str, int, str], ...] = (
    (("bank", 6, "base"),)
    + tuple(
        (f"seat{i}.{name}", size, owner) for i in range(MAX_PLAYERS) for name, size, owner in SEAT_SECTIONS
    )
    + (
        ("market_cards", BASE_SLOTS * CARD_DIM, "base"),
        ("nobles_on_offer", NOBLE_SLOTS * 6, "base"),
        ("deck_sizes", 3, "base"),
        ("phase_onehot", 3, "base"),
        ("final_round", 1, "base"),
        ("observer_seat_onehot", MAX_PLAYERS, "base"),
        ("observer_on_move", 1, "base"),
        ("turn_fraction", 1, "base"),
        # Module sections: only in games with modules; a disabled module's stay zero.
        ("modules_enabled", len(MODULE_NAMES), "modules"),
        ("module_phase_onehot", len(ONEHOT_MODULE_PHASES), "modules"),
    )
    + tuple(
        (f"mseat{i}.{name}", size, owner)
        for i in range(MAX_PLAYERS)
        for name, size, owner in MODULE_SEAT_SECTIONS
    )
    + (
        ("orient_market_cards", 3 * ORIENT_SLOTS * FULL_CARD_DIM, "orient"),
        ("orient_deck_sizes", 3, "orient"),
        ("strongholds_on_market", ALL_SLOTS * MAX_PLAYERS, "strongholds"),
        ("cities_on_offer", CITIES_ON_OFFER * CITY_DIM, "cities"),
        ("cards_in_box", 1, "orient"),
        ("pending_card", FULL_CARD_DIM, "orient"),
        ("pending_drawn_cards", 2 * FULL_CARD_DIM, "trading_posts"),
        ("pending_free_level", 3, "orient"),
        ("pending_sacrifice_left", 1, "orient"),
        ("pending_excluded_colour", 5, "trading_posts"),
        ("cards_per_colour", MAX_PLAYERS * 5, "modules"),
    )
)
OBS_OFFSETS = _offsets(OBS_SECTIONS)
OBS_DIM = sum(size for _, size, owner in OBS_SECTIONS if owner == "base")
OBS_DIM_ALL = sum(size for _, size, _ in OBS_SECTIONS)


def owned_by(owner: str) -> dict[str, list[str]]:
    """Everything a module (or ``"base"``) owns, by kind: the walkthrough for a reader of one module."""
    return {
        "state": [name for name, _, o, _ in STATE_FIELDS if o == owner],
        "phases": [name for name, o, _ in PHASES if o == owner],
        "actions": [name for name, _, o in ACTION_BLOCKS if o == owner],
        "observation": sorted({name.split(".")[-1] for name, _, o in OBS_SECTIONS if o == owner}),
    }
