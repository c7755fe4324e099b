"""The board as the page builds it: a JSON view of a position as one seat may see it, and what each legal id acts on.

Why JSON and not only the picture: the page lays the board out as HTML so that
every piece (a gem stack, a card, a deck, a noble, a trading post, a token of
your own) is an element you click, carrying the action ids it plays
(``data-action``), and so that the layout can reflow from a wide window to a
phone. :func:`board` hides what :mod:`splendor_env.picture` hides (deck
order, other seats' blind reserves, the drawn pair for anyone but the seat on
move); :func:`target` names the element each legal id belongs to.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from splendor_env.actions import TAKE2_SETS, TAKE3_SETS, block_of
from splendor_env.cards import (
    ALL_CARD_COLOUR,
    ALL_CARD_COST,
    ALL_CARD_EFFECT,
    ALL_CARD_LEVEL,
    ALL_CARD_POINTS,
    CITY_PRESTIGE,
    CITY_REQ,
    CITY_SAME,
    COLOURS,
    EFFECTS,
    NOBLE_POINTS,
    NOBLE_REQ,
    TOKEN_COLOURS,
    TRADING_POST_REQ,
    TRADING_POSTS,
)
from splendor_env.layout import ALL_SLOTS
from splendor_env.rules import apply_action
from splendor_env.snapshot import to_dict


def card(card_id: int) -> dict[str, Any] | None:
    """A card's face: colour (``None`` for a colourless Orient card), points, cost, level, effect."""
    if card_id < 0:
        return None
    colour = int(ALL_CARD_COLOUR[card_id])
    return {
        "id": int(card_id),
        "colour": COLOURS[colour] if colour >= 0 else None,
        "points": int(ALL_CARD_POINTS[card_id]),
        "cost": [int(n) for n in ALL_CARD_COST[card_id]],
        "level": int(ALL_CARD_LEVEL[card_id]) + 1,
        "effect": EFFECTS[int(ALL_CARD_EFFECT[card_id])] if ALL_CARD_EFFECT[card_id] else None,
    }


def board(state: np.ndarray, seat: int | None) -> dict[str, Any]:
    """The position as ``seat`` sees it (``None``: a spectator), for the page to lay out."""
    d = to_dict(state)
    n = int(d["num_players"])
    slots: list[dict[str, Any]] = []
    for level, row in enumerate(d["market"]):
        slots += [{"slot": level * 4 + k, "level": level + 1, "card": card(c)} for k, c in enumerate(row)]
    for level, row in enumerate(d.get("orient_market") or []):
        slots += [
            {"slot": 12 + level * 2 + k, "level": level + 1, "orient": True, "card": card(c)}
            for k, c in enumerate(row)
        ]
    for slot, owner, count in d.get("strongholds") or []:
        slots[slot].setdefault("strongholds", []).append({"seat": int(owner), "count": int(count)})
    players = []
    for p, player in enumerate(d["players"][:n]):
        reserved = [
            {"card": card(r["card"]) if (not r["blind"] or p == seat) else None, "blind": r["blind"]}
            for r in player["reserved"]
        ]
        players.append(
            {
                "tokens": player["tokens"],
                "bonuses": player["bonuses"],
                "prestige": player["prestige"],
                "purchased": [card(c) for c in player["purchased"]]
                if p == seat
                else len(player["purchased"]),
                "nobles": len(player["nobles"]),
                "reserved": reserved,
                "trading_posts": player.get("trading_posts", []),
                "stronghold_supply": player.get("stronghold_supply", 0),
            }
        )
    pending = d.get("pending", {})
    drawn = []
    if d["phase"] == "keep_drawn_card":
        faces = seat is not None and seat == int(d["current_player"])
        drawn = [card(int(pending[k])) if faces else None for k in ("drawn_0", "drawn_1")]
    return {
        "current": int(d["current_player"]),
        "phase": d["phase"],
        "turn": int(d["turn"]),
        "bank": d["bank"],
        "slots": slots,
        "decks": [len(deck) for deck in d["decks"]],
        "orient_decks": [len(deck) for deck in d.get("orient_decks") or []],
        "nobles": [
            {
                "noble": int(x["noble"]),
                "owner": x["owner"],
                "points": int(NOBLE_POINTS[x["noble"]]),
                "req": [int(v) for v in NOBLE_REQ[x["noble"]]],
            }
            for x in d["nobles"]
        ],
        "cities": [
            {
                "city": int(c["city"]),
                "owner": c["owner"],
                "prestige": int(CITY_PRESTIGE[c["city"]]),
                "req": [int(v) for v in CITY_REQ[c["city"]]],
                "same": int(CITY_SAME[c["city"]]),
            }
            for c in d.get("cities") or []
        ],
        "trading_posts": [
            {"name": name, "req": [int(v) for v in TRADING_POST_REQ[i]]}
            for i, name in enumerate(TRADING_POSTS)
        ]
        if "trading_posts" in d.get("modules", [])
        else [],
        "players": players,
        "drawn": drawn,
        "colours": list(TOKEN_COLOURS),
    }


def target(action: int) -> dict[str, Any]:
    """The board element an action id acts on (``target``), the verb a menu shows, and for a
    take of gems the colours it takes (``gems``; a colour twice for two of one)."""
    name, i = block_of(int(action))
    if name == "take_3_different":
        return {"target": "bank", "verb": "take", "gems": [COLOURS[c] for c in TAKE3_SETS[i]]}
    if name == "take_2_different":
        return {"target": "bank", "verb": "take", "gems": [COLOURS[c] for c in TAKE2_SETS[i]]}
    if name == "take_1":
        return {"target": "bank", "verb": "take", "gems": [COLOURS[i]]}
    if name == "take_2_same":
        return {"target": "bank", "verb": "take", "gems": [COLOURS[i], COLOURS[i]]}
    simple = {  # block -> (element id, with {i} the offset, {m} an Orient slot, {c} a colour; the verb)
        "reserve_market": ("slot-{i}", "reserve"),
        "buy_market": ("slot-{i}", "buy"),
        "reserve_deck": ("deck-{i}", "reserve blind"),
        "buy_reserved": ("reserved-{i}", "buy"),
        "discard": ("token-{c}", "discard"),
        "choose_noble": ("noble-{i}", "choose"),
        "choose_city": ("city-{i}", "choose"),
        "choose_trading_post": ("post-{i}", "choose"),
        "trading_post_token": ("bank-{c}", "take"),
        "trading_post_extra_token": ("bank-{c}", "take"),
        "keep_drawn_card": ("drawn-{i}", "keep"),
        "reserve_orient_market": ("slot-{m}", "reserve"),
        "buy_orient_market": ("slot-{m}", "buy"),
        "reserve_orient_deck": ("odeck-{i}", "reserve blind"),
        "buy_market_double_gold": ("slot-{i}", "buy with double gold"),
        "buy_reserved_double_gold": ("reserved-{i}", "buy with double gold"),
        "pair_target": ("card-{i}", "pair with"),
        "free_card": ("slot-{i}", "take free"),
        "sacrifice_discard": ("card-{i}", "sacrifice"),
        "stronghold_place": ("slot-{i}", "place stronghold"),
        "stronghold_remove": ("slot-{i}", "remove stronghold"),
    }
    if name in simple:
        element, verb = simple[name]
        colour = TOKEN_COLOURS[i] if "{c}" in element else ""
        return {"target": element.format(i=i, m=12 + i, c=colour), "verb": verb}
    if name == "stronghold_move":
        src, dst = divmod(i, ALL_SLOTS)
        return {"target": f"slot-{src}", "verb": "move stronghold", "to": f"slot-{dst}"}
    return {"target": "decision", "verb": name}  # pass, conquest: buttons on the board's decision bar


def spends(state: np.ndarray, action: int) -> dict[str, int]:
    """The tokens a purchase takes from the seat on move, gold included: the action played on a copy
    (so every rule that changes a price, a double-gold card or a trading post, is the engine's own)."""
    seat = int(to_dict(state)["current_player"])
    before = to_dict(state)["players"][seat]["tokens"]
    after_state = state.copy()
    apply_action(after_state, int(action))
    after = to_dict(after_state)["players"][seat]["tokens"]
    return {c: int(before[c] - after[c]) for c in before if before[c] > after[c]}
