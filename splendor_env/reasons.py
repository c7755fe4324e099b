"""Why an action is refused: the codes :func:`splendor_env.rules.illegal_reason` returns, and their text.

One table, shared by the base rules and every module, so a code means the same
thing everywhere and the env can turn any refusal into a sentence.
"""

from __future__ import annotations

#: (constant name, text) in code order; code 0 means legal.
_REASONS: tuple[tuple[str, str], ...] = (
    ("OK", "legal"),
    ("R_GAME_OVER", "the game is over"),
    (
        "R_NOT_MAIN_PHASE",
        "the player must first finish the current decision (discard or noble choice); "
        "main actions are not allowed now",
    ),
    (
        "R_NOT_DISCARD_PHASE",
        "discarding is only allowed when the player holds more than 10 tokens at the end of their action",
    ),
    (
        "R_NOT_NOBLE_PHASE",
        "choosing a noble is only allowed when several nobles qualify at the end of the turn",
    ),
    ("R_COLOUR_EMPTY", "the bank has no token of a requested colour"),
    (
        "R_MUST_TAKE_MORE",
        "fewer tokens than allowed: with 3 or more colours in the bank you must take 3 different colours "
        "(2 or 1 only when exactly that few colours are available)",
    ),
    ("R_BANK_BELOW_4", "taking 2 tokens of one colour needs at least 4 of that colour in the bank"),
    ("R_RESERVE_FULL", "the player already holds 3 reserved cards"),
    ("R_EMPTY_SLOT", "that market slot is empty"),
    ("R_EMPTY_DECK", "that deck is empty"),
    ("R_NO_RESERVED_CARD", "the player has no reserved card in that slot"),
    ("R_CANNOT_AFFORD", "the player cannot afford that card, even with gold"),
    ("R_NO_TOKEN", "the player holds no token of that colour"),
    ("R_NO_NOBLE", "there is no noble on offer in that slot"),
    ("R_NOBLE_NOT_MET", "the player's bonuses do not meet that noble's requirement"),
    ("R_PASS_NOT_ALLOWED", "passing is only allowed when no other action is legal"),
    ("R_MODULE_OFF", "that action belongs to a module that is not enabled in this game"),
    ("R_WRONG_PHASE", "that decision is not the one the player faces now"),
    (
        "R_OCCUPIED",
        "a card holding another player's stronghold can be bought, reserved or taken only by that player",
    ),
    ("R_NO_DOUBLE_GOLD", "the player holds no double-gold card"),
    ("R_DOUBLE_GOLD_NOT_NEEDED", "a double-gold card can only be spent in a purchase that needs gold"),
    ("R_NO_PAIR_TARGET", "a pair card can only be bought by a player who has a card with a bonus"),
    (
        "R_CANNOT_SACRIFICE",
        "the player does not hold enough purchased cards of the colour that card sacrifices",
    ),
    ("R_NOT_AN_OPTION", "that choice is not one of the options of the current decision"),
    ("R_ALREADY_HELD", "the player already holds that trading post, or already holds a city"),
    ("R_REQUIREMENT_NOT_MET", "the player does not meet that requirement"),
    ("R_NO_STRONGHOLD", "the player has no stronghold to place or move there"),
)

#: Human-readable text for each reason code, indexed by code.
REASONS = tuple(text for _, text in _REASONS)
_CODE = {name: code for code, (name, _) in enumerate(_REASONS)}

OK = _CODE["OK"]
R_GAME_OVER = _CODE["R_GAME_OVER"]
R_NOT_MAIN_PHASE = _CODE["R_NOT_MAIN_PHASE"]
R_NOT_DISCARD_PHASE = _CODE["R_NOT_DISCARD_PHASE"]
R_NOT_NOBLE_PHASE = _CODE["R_NOT_NOBLE_PHASE"]
R_COLOUR_EMPTY = _CODE["R_COLOUR_EMPTY"]
R_MUST_TAKE_MORE = _CODE["R_MUST_TAKE_MORE"]
R_BANK_BELOW_4 = _CODE["R_BANK_BELOW_4"]
R_RESERVE_FULL = _CODE["R_RESERVE_FULL"]
R_EMPTY_SLOT = _CODE["R_EMPTY_SLOT"]
R_EMPTY_DECK = _CODE["R_EMPTY_DECK"]
R_NO_RESERVED_CARD = _CODE["R_NO_RESERVED_CARD"]
R_CANNOT_AFFORD = _CODE["R_CANNOT_AFFORD"]
R_NO_TOKEN = _CODE["R_NO_TOKEN"]
R_NO_NOBLE = _CODE["R_NO_NOBLE"]
R_NOBLE_NOT_MET = _CODE["R_NOBLE_NOT_MET"]
R_PASS_NOT_ALLOWED = _CODE["R_PASS_NOT_ALLOWED"]
R_MODULE_OFF = _CODE["R_MODULE_OFF"]
R_WRONG_PHASE = _CODE["R_WRONG_PHASE"]
R_OCCUPIED = _CODE["R_OCCUPIED"]
R_NO_DOUBLE_GOLD = _CODE["R_NO_DOUBLE_GOLD"]
R_DOUBLE_GOLD_NOT_NEEDED = _CODE["R_DOUBLE_GOLD_NOT_NEEDED"]
R_NO_PAIR_TARGET = _CODE["R_NO_PAIR_TARGET"]
R_CANNOT_SACRIFICE = _CODE["R_CANNOT_SACRIFICE"]
R_NOT_AN_OPTION = _CODE["R_NOT_AN_OPTION"]
R_ALREADY_HELD = _CODE["R_ALREADY_HELD"]
R_REQUIREMENT_NOT_MET = _CODE["R_REQUIREMENT_NOT_MET"]
R_NO_STRONGHOLD = _CODE["R_NO_STRONGHOLD"]
