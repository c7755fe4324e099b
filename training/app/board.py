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
    ALL_CARD_SAC_COLOUR,
    ALL_CARD_SAC_COUNT,
    CITY_PRESTIGE,
    CITY_REQ,
    CITY_SAME,
    COLOURS,
    EFFECTS,
    NOBLE_POINTS,
    NOBLE_REQ,
    NUM_CARDS,
    TOKEN_COLOURS,
    TRADING_POST_REQ,
    TRADING_POSTS,
)
from splendor_env.layout import ALL_SLOTS
from splendor_env.modules.orient import cards_held
from splendor_env.picture_layout import EFFECT_TEXT, PHASE_TEXT, SEAT
from splendor_env.rules import apply_action
from splendor_env.snapshot import to_dict
from splendor_env.state import player_offset

#: Each seat's colour on the table (the picture's, :data:`splendor_env.picture_layout.SEAT`), as CSS.
SEAT_COLOURS = [f"#{r:02x}{g:02x}{b:02x}" for r, g, b in SEAT]


def card(card_id: int) -> dict[str, Any] | None:
    """A card's face: colour (``None`` for a colourless Orient card), points, cost, level, effect,
    and whether it is an Orient card (``orient``: the page marks those, wherever they lie).

    ``sacrifice``: what an Orient sacrifice card is paid with instead of its (empty) cost, the
    colour and number of your purchased cards it takes (``{"colour": "red", "count": 2}``), read
    from the engine's card tables; ``None`` for every other card."""
    if card_id < 0:
        return None
    colour = int(ALL_CARD_COLOUR[card_id])
    sacrifice = int(ALL_CARD_SAC_COUNT[card_id])
    return {
        "id": int(card_id),
        "orient": bool(card_id >= NUM_CARDS),
        "colour": COLOURS[colour] if colour >= 0 else None,
        "points": int(ALL_CARD_POINTS[card_id]),
        "cost": [int(n) for n in ALL_CARD_COST[card_id]],
        "level": int(ALL_CARD_LEVEL[card_id]) + 1,
        "effect": EFFECTS[int(ALL_CARD_EFFECT[card_id])] if ALL_CARD_EFFECT[card_id] else None,
        "effect_text": EFFECT_TEXT.get(EFFECTS[int(ALL_CARD_EFFECT[card_id])]),
        "sacrifice": {"colour": COLOURS[int(ALL_CARD_SAC_COLOUR[card_id])], "count": sacrifice}
        if sacrifice
        else None,
    }


def board(state: np.ndarray, seat: int | None) -> dict[str, Any]:
    """The position as ``seat`` sees it (``None``: a spectator), for the page to lay out.

    In an Orient game each player also has ``cards_held``: their purchased cards per colour as a
    sacrifice counts them (the engine's :func:`splendor_env.modules.orient.cards_held`: a pair card
    in its host's colour, a double-bonus card once), so the page can say whether a sacrifice card
    can be paid; bonuses alone cannot tell."""
    d = to_dict(state)
    n = int(d["num_players"])
    orient = "orient" in d.get("modules", [])
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
        if orient:
            held = cards_held(state, p, player_offset(p))
            players[-1]["cards_held"] = {c: int(k) for c, k in zip(COLOURS, held, strict=True)}
    pending = d.get("pending", {})
    drawn = []
    if d["phase"] == "keep_drawn_card":
        faces = seat is not None and seat == int(d["current_player"])
        drawn = [card(int(pending[k])) if faces else None for k in ("drawn_0", "drawn_1")]
    current = int(d["current_player"])
    return {
        "current": current,
        "phase": d["phase"],
        "phase_text": phase_text(d, current),
        "seat_colours": SEAT_COLOURS[:n],
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


def phase_text(d: dict[str, Any], seat: int) -> str:
    """The phase in words for a person (never the engine's name); the discard phase says how many go back."""
    if d["phase"] == "discard":
        held = sum(d["players"][seat]["tokens"].values())
        return f"return {held - 10} of {held} tokens (10 is the most you may hold)"
    return PHASE_TEXT.get(d["phase"], d["phase"].replace("_", " "))


def _card_words(card_id: int) -> str:
    """``a L2 red card`` (an Orient card says so; a colourless one has no colour)."""
    face = card(card_id)
    if face is None:
        return "a card"
    colour = f" {face['colour']}" if face["colour"] else ""
    if face["orient"]:
        return f"an Orient L{face['level']}{colour} card"
    return f"a L{face['level']}{colour} card"


def said(state: np.ndarray, action: int) -> dict[str, Any]:
    """:func:`_said` with the seat that moved (``seat``)."""
    return {"seat": int(to_dict(state)["current_player"]), **_said(state, action)}


def _said(state: np.ndarray, action: int) -> dict[str, Any]:
    """A move in a few words as people say it at the table (``took 2 red``, ``bought a L2 red card``,
    ``reserved from L3``) and the board elements it touched (``marks``), from the position before it.

    The words name only what every seat saw (a blind reserve names its deck, not its card)."""
    d = to_dict(state)
    seat = int(d["current_player"])
    name, i = block_of(int(action))
    market = [c for row in d["market"] for c in row] + [
        c for row in d.get("orient_market") or [] for c in row
    ]
    reserved = d["players"][seat]["reserved"]
    me = f"player-{seat}"
    if name in ("take_3_different", "take_2_different", "take_1"):
        sets = {"take_3_different": TAKE3_SETS, "take_2_different": TAKE2_SETS}
        gems = [COLOURS[c] for c in sets[name][i]] if name in sets else [COLOURS[i]]
        return {"text": "took " + ", ".join(gems), "marks": [f"bank-{g}" for g in gems]}
    if name == "take_2_same":
        return {"text": f"took 2 {COLOURS[i]}", "marks": [f"bank-{COLOURS[i]}"]}
    if name in ("buy_market", "buy_market_double_gold", "reserve_market", "free_card"):
        verb = {"reserve_market": "reserved", "free_card": "took free"}.get(name, "bought")
        return {"text": f"{verb} {_card_words(market[i])}", "marks": [f"slot-{i}", me]}
    if name in ("buy_orient_market", "reserve_orient_market"):
        verb = "reserved" if name.startswith("reserve") else "bought"
        return {"text": f"{verb} {_card_words(market[12 + i])}", "marks": [f"slot-{12 + i}", me]}
    if name in ("buy_reserved", "buy_reserved_double_gold"):
        return {"text": f"bought {_card_words(reserved[i]['card'])} they had reserved", "marks": [me]}
    if name == "reserve_deck":
        return {"text": f"reserved from L{i + 1}", "marks": [f"deck-{i}", me]}
    if name == "reserve_orient_deck":
        return {"text": f"reserved from Orient L{i + 1}", "marks": [f"odeck-{i}", me]}
    if name == "discard":
        return {"text": f"returned 1 {TOKEN_COLOURS[i]}", "marks": [f"bank-{TOKEN_COLOURS[i]}", me]}
    if name in ("trading_post_token", "trading_post_extra_token"):
        return {"text": f"took 1 {TOKEN_COLOURS[i]} (trading post)", "marks": [f"bank-{TOKEN_COLOURS[i]}"]}
    if name == "choose_noble":
        return {"text": "was visited by a noble", "marks": [f"noble-{i}", me]}
    if name == "choose_city":
        return {"text": "claimed a city", "marks": [f"city-{i}", me]}
    if name == "choose_trading_post":
        return {
            "text": f"claimed the trading post {TRADING_POSTS[i].replace('_', ' ')}",
            "marks": [f"post-{i}"],
        }
    if name == "keep_drawn_card":
        return {"text": "kept one of two drawn cards", "marks": [me]}
    if name == "pair_target":
        return {"text": f"paired {_card_words(i)}", "marks": [me]}
    if name == "sacrifice_discard":
        return {"text": f"sacrificed {_card_words(i)}", "marks": [me]}
    if name in ("stronghold_place", "stronghold_remove"):
        verb = "placed" if name.endswith("place") else "removed"
        return {"text": f"{verb} a stronghold", "marks": [f"slot-{i}"]}
    if name == "stronghold_move":
        src, dst = divmod(i, ALL_SLOTS)
        return {"text": "moved a stronghold", "marks": [f"slot-{src}", f"slot-{dst}"]}
    if name == "conquest":
        return {"text": "conquered a card", "marks": [me]}
    return {"text": "passed" if name == "pass" else name.replace("_", " "), "marks": [me]}


def last_moves(
    history: list[tuple[int, int, dict[str, Any]]], num_players: int
) -> list[dict[str, Any] | None]:
    """Each seat's last turn from ``history`` (``(move number, seat, said)`` in play order): its moves'
    words and marks (a turn: one seat's decisions in a row, a purchase and its noble say both), or ``None``."""
    last: list[dict[str, Any] | None] = [None] * num_players
    previous = None
    for move, seat, words in history:
        turn = last[seat]
        if previous != seat or turn is None:
            turn = last[seat] = {"move": move, "words": [], "marks": []}
        turn["move"] = move
        turn["words"].append(words["text"])
        turn["marks"] += [m for m in words["marks"] if m not in turn["marks"]]
        previous = seat
    return last


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
