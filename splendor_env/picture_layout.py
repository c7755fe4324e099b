"""The layout of a position's picture: its shapes, their colours, and where each piece goes.

Why a file of its own: :func:`splendor_env.picture.draw` builds a :class:`Picture`
with :class:`Layout` (one method per piece of the board) and the two outputs in
:mod:`splendor_env.picture` (SVG, Pillow) paint those shapes; the layout is the one
place that decides what is drawn where, and it needs neither output. Every public
name a user needs (the shapes, ``WIDTH``, ``HEIGHT``) is importable from
:mod:`splendor_env.picture` too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .cards import (
    ALL_CARD_BONUS,
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
    EFFECT_DOUBLE_GOLD,
    EFFECTS,
    NOBLE_POINTS,
    NOBLE_REQ,
    NUM_CARDS,
    TOKEN_COLOURS,
    TRADING_POST_REQ,
    TRADING_POSTS,
)

#: Size of every picture, whatever the players and modules (a video keeps one frame size).
WIDTH, HEIGHT = 1280, 840

RGB = tuple[int, int, int]

GEM: dict[str, RGB] = {
    "white": (246, 244, 236),
    "blue": (38, 92, 186),
    "green": (36, 138, 72),
    "red": (200, 48, 44),
    "black": (44, 44, 50),
    "gold": (232, 182, 36),
}
#: Text colour that reads on each gem colour.
ON_GEM: dict[str, RGB] = {c: (20, 20, 20) if c in ("white", "gold") else (255, 255, 255) for c in GEM}
NO_COLOUR: RGB = (150, 150, 150)
SEAT: tuple[RGB, ...] = ((228, 118, 20), (124, 72, 184), (18, 146, 156), (204, 58, 120))
BACKGROUND: RGB = (232, 226, 212)
PANEL: RGB = (250, 248, 242)
EDGE: RGB = (160, 150, 130)
INK: RGB = (30, 30, 30)
FAINT: RGB = (110, 105, 95)
HEADER: RGB = (44, 54, 66)
LEVEL_BACK: tuple[RGB, ...] = ((84, 150, 92), (206, 168, 58), (70, 110, 182))
ORIENT_BACK: RGB = (156, 84, 60)

PHASE_TEXT = {
    "main": "choose a main action: take tokens, reserve or buy a card",
    "discard": "discard down to 10 tokens",
    "noble": "choose which noble visits",
    "game_over": "the game is over",
    "truncated": "the game stopped at the turn cap",
    "trading_post_choice": "choose which trading post to claim",
    "trading_post_token": "trading post: take a token after buying",
    "trading_post_extra_token": "trading post: take the extra token",
    "keep_drawn_card": "trading post: keep one of the two drawn cards",
    "pair_target": "Orient: choose the card to pair with",
    "free_card": "Orient: take a free card",
    "sacrifice_choice": "Orient: choose the cards to sacrifice",
    "stronghold": "strongholds: place, move or remove one",
    "conquest": "strongholds: conquer a card?",
    "city": "choose which city to claim",
}
EFFECT_TEXT = {
    "double_gold": "2 gold",
    "pair": "pair",
    "pair_free_level1": "pair + L1",
    "double_bonus": "2 bonus",
    "free_level2": "free L2",
    "sacrifice": "sacrifice",
}
TRADING_POST_TEXT = {
    "token_after_buy": "token after buy",
    "draw_two": "draw 2, keep 1",
    "extra_token": "extra token",
    "gold_double": "gold pays 2",
    "points": "1 pt per post",
}


# ---------------------------------------------------------------------------
# The shapes: the one layout both outputs draw


@dataclass(frozen=True)
class Rect:
    """A rectangle (``radius`` rounds its corners)."""

    x: float
    y: float
    w: float
    h: float
    fill: RGB | None
    outline: RGB | None = None
    radius: float = 0
    width: int = 1


@dataclass(frozen=True)
class Circle:
    """A disc centred on ``(cx, cy)``."""

    cx: float
    cy: float
    r: float
    fill: RGB
    outline: RGB | None = None


@dataclass(frozen=True)
class Text:
    """One line of text; ``align`` is ``"l"``, ``"m"`` or ``"r"`` about ``x``, vertically centred on ``y``."""

    x: float
    y: float
    text: str
    size: int
    fill: RGB = INK
    align: str = "l"
    bold: bool = False


Shape = Rect | Circle | Text


@dataclass
class Picture:
    """What :func:`splendor_env.picture.draw` returns: the canvas size and its shapes, back to front."""

    width: int = WIDTH
    height: int = HEIGHT
    shapes: list[Shape] = field(default_factory=list)

    def texts(self) -> list[str]:
        """Every string on the picture (what a test or a screen reader looks for)."""
        return [s.text for s in self.shapes if isinstance(s, Text)]


# ---------------------------------------------------------------------------
# Reading the position


def as_snapshot(state_or_snapshot: Any) -> dict[str, Any]:
    """A :func:`~splendor_env.snapshot.to_dict` snapshot of a state array or a snapshot dict.

    A dict is validated (``from_dict``) first, as any snapshot a user hands the
    library; a state array is taken as the engine's own (the env's hot path).
    """
    from . import snapshot as snap

    if isinstance(state_or_snapshot, dict):
        return snap.to_dict(snap.from_dict(state_or_snapshot))
    a = state_or_snapshot
    if isinstance(a, np.ndarray) and a.ndim == 1 and np.issubdtype(a.dtype, np.integer):
        if len(a) not in (snap.STATE_SIZE, snap.STATE_SIZE_ALL):
            raise ValueError(
                f"a state array has length {snap.STATE_SIZE} or {snap.STATE_SIZE_ALL}, got {len(a)}"
            )
        return snap.to_dict(a)
    raise TypeError(
        "expected an engine state array (env.game_state, env.engine_state()) or a snapshot dict "
        f"(env.snapshot()), got {type(a).__name__}"
        + (f" of dtype {a.dtype}" if isinstance(a, np.ndarray) else "")
    )


def check_seat(seat: Any, n: int) -> int | None:
    """The viewing seat checked: ``None`` (a spectator) or a seat of an ``n``-player game."""
    if seat is None:
        return None
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
        raise ValueError(f"seat must be None (a spectator) or a seat in 0..{n - 1}, got {seat!r}")
    return int(seat)


def _colour_of(card: int) -> tuple[RGB, RGB]:
    """(fill, ink) of a card's colour band; an Orient card without a colour is grey (gold for double gold)."""
    c = int(ALL_CARD_COLOUR[card])
    if c >= 0:
        return GEM[COLOURS[c]], ON_GEM[COLOURS[c]]
    if ALL_CARD_EFFECT[card] == EFFECT_DOUBLE_GOLD:
        return GEM["gold"], ON_GEM["gold"]
    return NO_COLOUR, (255, 255, 255)


def _tint(rgb: RGB, amount: float = 0.78) -> RGB:
    return tuple(int(v + (255 - v) * amount) for v in rgb)  # type: ignore[return-value]


# ---------------------------------------------------------------------------
# Layout


class Layout:
    """Builds the shapes of one picture; one method per piece of the board."""

    def __init__(self, d: dict[str, Any], seat: int | None, caption: str | None, names: list[str] | None):
        self.d = d
        self.seat = seat
        self.caption = caption
        self.n = int(d["num_players"])
        self.modules = tuple(d.get("modules", ()))
        self.names = names
        self.out: list[Shape] = []
        self.strongholds = {int(m): (int(q), int(c)) for m, q, c in d.get("strongholds", ())}

    # -- primitives ---------------------------------------------------------
    def rect(self, *a: Any, **k: Any) -> None:
        self.out.append(Rect(*a, **k))

    def circle(self, *a: Any, **k: Any) -> None:
        self.out.append(Circle(*a, **k))

    def text(self, *a: Any, **k: Any) -> None:
        self.out.append(Text(*a, **k))

    def panel(self, x: float, y: float, w: float, h: float, title: str | None = None) -> None:
        self.rect(x, y, w, h, PANEL, EDGE, radius=8)
        if title:
            self.text(x + 10, y + 13, title, 13, FAINT, bold=True)

    def gem(self, cx: float, cy: float, r: float, colour: str, count: int | str | None) -> None:
        """A token (or a cost) of ``colour``, its count written on it."""
        self.circle(cx, cy, r, GEM[colour], (90, 90, 90))
        if count is not None:
            self.text(cx, cy, str(count), max(9, int(r * 1.1)), ON_GEM[colour], "m", bold=True)

    def chip(self, x: float, y: float, w: float, h: float, colour: str | None, count: int | str) -> None:
        """A small square in a gem colour with a number: a bonus or a requirement."""
        fill = GEM[colour] if colour else NO_COLOUR
        ink = ON_GEM[colour] if colour else (255, 255, 255)
        self.rect(x, y, w, h, fill, (90, 90, 90), radius=3)
        self.text(x + w / 2, y + h / 2, str(count), max(9, int(h * 0.62)), ink, "m", bold=True)

    # -- cards --------------------------------------------------------------
    def card(self, x: float, y: float, card: int, w: float = 88, h: float = 120, slot: int = -1) -> None:
        """A face-up card: colour band with points and bonus, cost discs, Orient effect, strongholds."""
        k = w / 88
        band, ink = _colour_of(card)
        self.rect(x, y, w, h, _tint(band), (70, 70, 70), radius=6 * k)
        self.rect(x, y, w, 30 * k, band, None, radius=6 * k)
        points = int(ALL_CARD_POINTS[card])
        if points:
            self.text(x + 8 * k, y + 15 * k, str(points), int(22 * k), ink, bold=True)
        bonus = int(ALL_CARD_BONUS[card])
        self.circle(
            x + w - 15 * k, y + 15 * k, 10 * k, band, (255, 255, 255) if band != GEM["white"] else INK
        )
        if bonus > 1:
            self.text(x + w - 15 * k, y + 15 * k, f"x{bonus}", int(11 * k), ink, "m", bold=True)
        effect = EFFECTS[int(ALL_CARD_EFFECT[card])]
        if card >= NUM_CARDS:
            self.text(x + w - 6 * k, y + 42 * k, EFFECT_TEXT.get(effect, "orient"), int(11 * k), INK, "r")
        if ALL_CARD_SAC_COUNT[card]:
            colour = COLOURS[int(ALL_CARD_SAC_COLOUR[card])]
            self.gem(x + 14 * k, y + h - 14 * k, 10 * k, colour, f"-{int(ALL_CARD_SAC_COUNT[card])}")
        else:
            cy = y + h - 14 * k
            for c in range(4, -1, -1):
                n = int(ALL_CARD_COST[card][c])
                if n:
                    self.gem(x + 14 * k, cy, 10 * k, COLOURS[c], n)
                    cy -= 22 * k
        if slot in self.strongholds:
            q, count = self.strongholds[slot]
            self.rect(x + w - 30, y + h - 24, 26, 20, SEAT[q], (255, 255, 255), radius=3)
            self.text(x + w - 17, y + h - 14, f"{count}", 13, (255, 255, 255), "m", bold=True)

    def card_back(self, x: float, y: float, deck: int, w: float, h: float, lines: tuple[str, ...]) -> None:
        """A face-down card (or a deck) of deck ``deck`` (0-2 base levels, 3-5 Orient levels)."""
        fill = ORIENT_BACK if deck >= 3 else LEVEL_BACK[deck]
        self.rect(x, y, w, h, fill, (60, 60, 60), radius=6 * w / 88)
        self.rect(x + 5, y + 5, w - 10, h - 10, None, (255, 255, 255), radius=4)
        top = y + h / 2 - 9 * (len(lines) - 1)
        for i, line in enumerate(lines):
            self.text(x + w / 2, top + 18 * i, line, 15 if i == 0 else 12, (255, 255, 255), "m", bold=i == 0)

    def slot_card(self, x: float, y: float, card: int, slot: int) -> None:
        if card < 0:
            self.rect(x, y, 88, 120, None, EDGE, radius=6)
            self.text(x + 44, y + 60, "empty", 12, FAINT, "m")
        else:
            self.card(x, y, card, slot=slot)

    # -- the board ----------------------------------------------------------
    def header(self) -> None:
        d = self.d
        self.rect(0, 0, WIDTH, 40, HEADER)
        cur = int(d["current_player"])
        over = d["phase"] in ("game_over", "truncated")
        if not over:
            self.circle(20, 20, 8, SEAT[cur])
        who = "final position" if over else _clip(f"{self.name(cur)} to move", 48)
        self.text(36, 20, f"Turn {int(d['turn'])}  |  {who}", 17, (255, 255, 255), bold=True)
        if d["final_round"] and not over:
            self.rect(330, 8, 110, 24, (200, 48, 44), radius=5)
            self.text(385, 20, "FINAL ROUND", 13, (255, 255, 255), "m", bold=True)
        view = "spectator view" if self.seat is None else f"as seen by {self.name(self.seat)}"
        mods = ", ".join(m.replace("_", " ") for m in self.modules) or "base game"
        self.text(WIDTH - 14, 20, f"{mods}  |  {view}", 14, (220, 225, 230), "r")

    def name(self, p: int) -> str:
        if self.names and p < len(self.names) and self.names[p]:
            return f"player_{p} ({self.names[p]})"
        return f"player_{p}"

    def bank(self, x: float, y: float) -> None:
        self.panel(x, y, 250, 66, "BANK")
        for c, colour in enumerate(TOKEN_COLOURS):
            self.gem(x + 28 + c * 39, y + 42, 16, colour, int(self.d["bank"][colour]))

    def noble_tile(self, x: float, y: float, noble: int, size: float = 74) -> None:
        k = size / 74
        self.rect(x, y, size, size, (240, 228, 200), (120, 100, 70), radius=5 * k)
        self.text(x + 8 * k, y + 14 * k, str(int(NOBLE_POINTS[noble])), int(20 * k), INK, bold=True)
        req = [(COLOURS[c], int(r)) for c, r in enumerate(NOBLE_REQ[noble]) if r]
        for i, (colour, r) in enumerate(req):
            self.chip(x + size - 22 * k, y + 4 * k + i * 23 * k, 18 * k, 20 * k, colour, r)

    def nobles(self, x: float, y: float) -> None:
        offer = [int(e["noble"]) for e in self.d["nobles"] if e["owner"] is None]
        self.panel(x, y, 250, 196, "NOBLES")
        for i, noble in enumerate(offer):
            self.noble_tile(x + 8 + (i % 3) * 80, y + 28 + (i // 3) * 82, noble)
        if not offer:
            self.text(x + 125, y + 100, "none left", 13, FAINT, "m")

    def cities(self, x: float, y: float) -> None:
        self.panel(x, y, 250, 150, "CITIES")
        for i, entry in enumerate(self.d["cities"]):
            city, owner = int(entry["city"]), entry["owner"]
            ty = y + 26 + i * 40
            self.rect(x + 8, ty, 234, 36, (226, 232, 240), (110, 120, 140), radius=5)
            self.text(x + 30, ty + 18, f"{int(CITY_PRESTIGE[city])}", 17, INK, "r", bold=True)
            self.text(x + 33, ty + 19, "pts", 10, FAINT)
            cx = x + 58
            for c, r in enumerate(CITY_REQ[city]):
                if r:
                    self.chip(cx, ty + 7, 20, 22, COLOURS[c], int(r))
                    cx += 23
            if CITY_SAME[city]:
                self.chip(cx, ty + 7, 20, 22, None, int(CITY_SAME[city]))
                self.text(cx + 24, ty + 18, "of one", 10, FAINT)
            if owner is not None:
                self.rect(x + 190, ty + 6, 46, 24, SEAT[int(owner)], radius=4)
                self.text(x + 213, ty + 18, f"p{owner}", 13, (255, 255, 255), "m", bold=True)

    def market(self, x: float, y: float) -> None:
        d = self.d
        orient = "orient" in self.modules
        for row, lvl in enumerate((2, 1, 0)):
            ry = y + row * 130
            self.card_back(x, ry, lvl, 72, 120, (f"L{lvl + 1}", f"{len(d['decks'][lvl])} left"))
            for k in range(4):
                self.slot_card(x + 82 + k * 96, ry, int(d["market"][lvl][k]), lvl * 4 + k)
            if orient:
                ox = x + 82 + 4 * 96 + 12
                self.card_back(
                    ox, ry, 3 + lvl, 72, 120, (f"L{lvl + 1}", "Orient", f"{len(d['orient_decks'][lvl])} left")
                )
                for k in range(2):
                    self.slot_card(ox + 82 + k * 96, ry, int(d["orient_market"][lvl][k]), 12 + lvl * 2 + k)

    def decision(self, x: float, y: float) -> None:
        """The pending decision: who decides what, and the cards it concerns."""
        d = self.d
        self.panel(x, y, 240, 200, "DECISION")
        cur = int(d["current_player"])
        phase = d["phase"]
        ty = y + 36
        if phase == "game_over":
            winners = d["winners"]
            self.text(x + 10, ty, "game over", 16, INK, bold=True)
            verb = "share the victory" if len(winners) > 1 else "wins"
            for i, p in enumerate(winners):
                self.circle(x + 18, ty + 24 + i * 20, 6, SEAT[p])
                self.text(x + 30, ty + 24 + i * 20, _clip(self.name(p), 28), 13, INK)
            self.text(x + 10, ty + 28 + len(winners) * 20, verb, 13, FAINT)
            return
        if phase != "truncated":
            self.circle(x + 18, ty, 7, SEAT[cur])
            self.text(x + 32, ty, _clip(self.name(cur), 26), 14, INK, bold=True)
            ty += 22
        self.text(x + 10, ty, f"phase: {phase}", 13, FAINT)
        for line in _wrap(PHASE_TEXT.get(phase, phase), 34):
            ty += 18
            self.text(x + 10, ty, line, 13, INK)
        pending = d.get("pending", {})
        ty += 14
        if phase == "keep_drawn_card":
            deck = int(pending["drawn_deck"])
            for i, key in enumerate(("drawn_0", "drawn_1")):
                if self.seat == cur:
                    self.card(x + 10 + i * 74, ty, int(pending[key]), 66, 90)
                else:
                    self.card_back(x + 10 + i * 74, ty, deck, 66, 90, (f"L{deck % 3 + 1}", "hidden"))
        elif phase == "pair_target" and pending.get("pair_card", -1) >= 0:
            self.card(x + 10, ty, int(pending["pair_card"]), 66, 90)
        elif phase == "sacrifice_choice" and pending.get("sacrifice_card", -1) >= 0:
            self.card(x + 10, ty, int(pending["sacrifice_card"]), 66, 90)
            self.text(x + 86, ty + 20, f"{int(pending['sacrifice_left'])} to sacrifice", 13, INK)
        elif phase == "free_card":
            self.text(x + 10, ty + 4, f"a free level-{int(pending['free_level']) + 1} card", 13, INK)
        if d.get("boxed"):
            self.text(x + 230, y + 13, f"{len(d['boxed'])} boxed", 11, FAINT, "r")

    def trading_posts(self, x: float, y: float) -> None:
        self.panel(x, y, 240, 196, "TRADING POSTS")
        for i, post in enumerate(TRADING_POSTS):
            ty = y + 30 + i * 33
            self.text(x + 10, ty + 11, TRADING_POST_TEXT[post], 12, INK)
            cx = x + 110
            for c, r in enumerate(TRADING_POST_REQ[i]):
                if r:
                    self.chip(cx, ty, 18, 22, COLOURS[c], int(r))
                    cx += 21
            holders = [p for p in range(self.n) if post in self.d["players"][p]["trading_posts"]]
            for j, p in enumerate(holders):
                self.circle(x + 164 + j * 19, ty + 11, 8, SEAT[p], (255, 255, 255))

    def player(self, x: float, y: float, w: float, p: int) -> None:
        d = self.d
        me = d["players"][p]
        over = d["phase"] in ("game_over", "truncated")
        on_move = p == int(d["current_player"]) and not over
        h = 350
        self.rect(x, y, w, h, PANEL, SEAT[p], radius=8, width=4 if on_move else 1)
        self.rect(x, y, w, 34, SEAT[p] if on_move else _tint(SEAT[p], 0.45), None, radius=8)
        label = _clip(("> " if on_move else "") + self.name(p), 30)  # an agent spec can be a long path
        self.text(x + 10, y + 17, label, 15, (255, 255, 255), bold=True)
        self.text(x + w - 12, y + 17, f"{int(me['prestige'])} pts", 18, (255, 255, 255), "r", bold=True)
        if over and p in d["winners"]:
            self.text(x + w - 70, y + 17, "WINNER", 12, (255, 255, 255), "r", bold=True)
        tokens = me["tokens"]
        self.text(x + 10, y + 56, "tokens", 11, FAINT)
        for c, colour in enumerate(TOKEN_COLOURS):
            self.gem(x + 74 + c * 34, y + 56, 14, colour, int(tokens[colour]))
        self.text(x + w - 10, y + 56, f"{sum(int(v) for v in tokens.values())}/10", 11, FAINT, "r")
        self.text(x + 10, y + 96, "bonuses", 11, FAINT)
        for c, colour in enumerate(COLOURS):
            self.chip(x + 62 + c * 34, y + 82, 28, 28, colour, int(me["bonuses"][colour]))
        self.text(x + w - 10, y + 96, f"{len(me['purchased'])} cards", 11, FAINT, "r")
        self.text(x + 10, y + 124, "reserved" if me["reserved"] else "reserved: none", 11, FAINT)
        for r, entry in enumerate(me["reserved"]):
            card, blind = int(entry["card"]), bool(entry["blind"])
            rx, ry = x + 10 + r * 74, y + 134
            if blind and self.seat != p:
                deck = int(ALL_CARD_LEVEL[card]) + (3 if card >= NUM_CARDS else 0)
                self.card_back(rx, ry, deck, 66, 90, (f"L{deck % 3 + 1}", "hidden"))
            else:
                self.card(rx, ry, card, 66, 90)
                if blind:
                    self.text(rx + 33, ry + 98, "blind", 10, FAINT, "m")
        ey = y + 248
        if "cities" in self.modules:
            owned = [int(e["city"]) for e in d["cities"] if e["owner"] == p]
            text = f"city claimed: {int(CITY_PRESTIGE[owned[0]])} pts" if owned else "no city"
            self.text(x + 10, ey, text, 12, INK if owned else FAINT)
        else:
            self.text(x + 10, ey, "nobles", 11, FAINT)
            for i, noble in enumerate(me["nobles"]):
                self.noble_tile(x + 60 + i * 40, ey - 17, int(noble), 34)
            if not me["nobles"]:
                self.text(x + 60, ey, "none", 11, FAINT)
        if "trading_posts" in self.modules:
            held = ", ".join(TRADING_POST_TEXT[t] for t in me["trading_posts"]) or "none"
            self.text(x + 10, ey + 32, _clip(f"trading posts: {held}", 44), 11, INK)
        if "strongholds" in self.modules:
            self.text(x + 10, ey + 64, f"strongholds in supply: {int(me['stronghold_supply'])}", 11, FAINT)
            for i in range(int(me["stronghold_supply"])):
                self.rect(x + 150 + i * 24, ey + 55, 18, 18, SEAT[p], (255, 255, 255), radius=3)
        if "orient" in self.modules and me.get("pairs"):
            self.text(x + w - 10, ey + 64, f"{len(me['pairs'])} paired", 11, FAINT, "r")

    def build(self) -> list[Shape]:
        self.rect(0, 0, WIDTH, HEIGHT, BACKGROUND)
        self.header()
        self.bank(12, 50)
        if "cities" in self.modules:  # cities replace the nobles (docs/rules.md)
            self.cities(12, 124)
        else:
            self.nobles(12, 124)
        self.market(274, 50)
        self.decision(1028, 50)
        if "trading_posts" in self.modules:
            self.trading_posts(1028, 258)
        pw = (WIDTH - 24 - 3 * 8) / 4
        for p in range(self.n):
            self.player(12 + p * (pw + 8), 444, pw, p)
        if self.caption:
            self.rect(0, HEIGHT - 42, WIDTH, 42, HEADER)
            self.text(14, HEIGHT - 21, _clip(self.caption, 150), 16, (255, 255, 255))
        return self.out


def _wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return lines + ([line] if line else [])


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."
