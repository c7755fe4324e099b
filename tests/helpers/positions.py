"""The one position builder of the test suite, for base games and module games alike.

A test states the situation a rule talks about and nothing else::

    s = Position(2).tokens(0, "2G 1*").slot(0, 7).build()
    s = Position(2, modules=("orient",)).give(0, 90).slot(0, 25).tokens(0, "1W").build()

:class:`Position` starts from a freshly dealt game (``new_state``, with the
modules asked for), moves cards and tokens so that conservation always holds
(every card in exactly one place, token totals as at setup), and :meth:`build`
goes through ``from_dict``. So a constructed position is validated exactly like a
snapshot a user would restore: bonuses, prestige and the module derived fields
are recomputed, and an impossible game is refused.

Conventions (the same as the action table): market slots ``m`` are flat,
``level * 4 + k`` for the base market (0-11) and ``12 + level * 2 + k`` for the
Orient market (12-17); decks are 0-2 (base levels 1-3) and 3-5 (Orient levels
1-3); colours are white 0, blue 1, green 2, red 3, black 4, gold 5. Tokens are
given as compact text ``"2W 1U 1*"`` (letters W U G R K *), a dict
(``{"white": 2}``) or a list of 5 or 6 counts.

:func:`make_snapshot` / :func:`make_state` are the keyword form of the same
builder (one call, no chaining), kept for the tests that build a position in an
expression.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from splendor_env import state as st
from splendor_env.cards import (
    ALL_CARD_LEVEL,
    CARD_COLOUR,
    CARD_LEVEL,
    COLOUR_LETTERS,
    NUM_CARDS,
    TOKEN_COLOURS,
)
from splendor_env.deal import new_state
from splendor_env.snapshot import from_dict, to_dict

TokenSpec = str | Mapping[str, int] | Sequence[int]
ReserveSpec = int | tuple[int, bool]

__all__ = [
    "Position",
    "ReserveSpec",
    "TokenSpec",
    "base_cards",
    "make_snapshot",
    "make_state",
    "tokens6",
]


def tokens6(spec: TokenSpec | None) -> list[int]:
    """Normalise a token spec to 6 counts (white, blue, green, red, black, gold)."""
    if spec is None:
        return [0] * 6
    if isinstance(spec, str):
        out = [0] * 6
        for part in spec.split():
            m = re.fullmatch(r"(\d*)([WUGRK*])", part)
            if not m:
                raise ValueError(f"bad token text {part!r} in {spec!r} (use e.g. '2W 1U 1*')")
            out[COLOUR_LETTERS.index(m.group(2))] += int(m.group(1) or 1)
        return out
    if isinstance(spec, Mapping):
        unknown = set(spec) - set(TOKEN_COLOURS)
        if unknown:
            raise ValueError(f"unknown colours {unknown}")
        return [int(spec.get(c, 0)) for c in TOKEN_COLOURS]
    counts = [int(x) for x in spec]
    if len(counts) == 5:
        counts.append(0)
    if len(counts) != 6:
        raise ValueError(f"token list must have 5 or 6 counts, got {counts}")
    return counts


def base_cards(colour: int, level: int = 0) -> list[int]:
    """Base card ids of one colour and level (level 0 = level 1), in id order."""
    return [c for c in range(NUM_CARDS) if CARD_COLOUR[c] == colour and CARD_LEVEL[c] == level]


def _as_dict(counts: Sequence[int]) -> dict[str, int]:
    return {c: int(n) for c, n in zip(TOKEN_COLOURS, counts, strict=True)}


class Position:
    """A game position under construction; every method returns ``self`` so calls chain.

    Cards: :meth:`give`, :meth:`reserve`, :meth:`pair`, :meth:`box` and
    :meth:`slot` take a card from wherever the deal put it (a deck or a market
    slot); a market slot emptied that way is refilled from the top of its deck,
    as in play. Tokens: :meth:`tokens` fixes a seat's hand, :meth:`bank` the
    bank; see :meth:`bank` for where the rest goes. Nobles on offer are the
    deal's unless :meth:`nobles` says otherwise.
    """

    def __init__(
        self,
        num_players: int = 2,
        *,
        modules: Iterable[str] = (),
        seed: int = 0,
        max_turns: int = st.DEFAULT_MAX_TURNS,
    ) -> None:
        self.num_players = num_players
        self.modules = tuple(modules)
        self._d: dict[str, Any] = to_dict(new_state(num_players, seed, max_turns, modules=self.modules))
        self._tokens: dict[int, list[int]] = {}
        self._bank: list[int] | None = None
        self._offer: list[int] | None = None
        self._owned_nobles: list[tuple[int, int]] = []
        self._current = 0
        self._turn: int | None = None

    # -- cards ---------------------------------------------------------------
    def _row(self, m: int) -> tuple[list[int], int, list[int]]:
        """(market row, index in it, its deck) of flat market slot ``m``."""
        if not 0 <= m < st.ALL_SLOTS:
            raise ValueError(f"market slot {m} is not in 0..{st.ALL_SLOTS - 1}")
        if m < st.BASE_SLOTS:
            lvl, k = divmod(m, st.MARKET_SLOTS)
            return self._d["market"][lvl], k, self._d["decks"][lvl]
        if "orient_market" not in self._d:
            raise ValueError(f"market slot {m} is an Orient slot but the game has no Orient")
        lvl, k = divmod(m - st.BASE_SLOTS, st.ORIENT_SLOTS)
        return self._d["orient_market"][lvl], k, self._d["orient_decks"][lvl]

    def _deck(self, deck: int) -> list[int]:
        if 0 <= deck < 3:
            return self._d["decks"][deck]
        if 3 <= deck < 6 and "orient_decks" in self._d:
            return self._d["orient_decks"][deck - 3]
        raise ValueError(f"no deck {deck} in this game (0-2 base, 3-5 Orient)")

    def _take(self, card: int) -> None:
        """Take ``card`` out of its deck or market slot (the slot is refilled from its deck)."""
        for deck in self._d["decks"] + self._d.get("orient_decks", []):
            if card in deck:
                deck.remove(card)
                return
        for m in range(st.ALL_SLOTS if "orient_market" in self._d else st.BASE_SLOTS):
            row, k, deck = self._row(m)
            if row[k] == card:
                row[k] = deck.pop() if deck else -1
                return
        raise ValueError(f"card {card} is not in a deck or the market any more (placed twice?)")

    def give(self, seat: int, *cards: int) -> Position:
        """Seat ``seat`` has purchased ``cards``."""
        for c in cards:
            self._take(c)
            self._d["players"][seat]["purchased"].append(int(c))
        return self

    def reserve(self, seat: int, card: int, blind: bool = False) -> Position:
        """Seat ``seat`` holds ``card`` reserved (``blind``: taken from the top of a deck)."""
        self._take(card)
        self._d["players"][seat]["reserved"].append({"card": int(card), "blind": bool(blind)})
        return self

    def pair(self, seat: int, card: int, host: int) -> Position:
        """Seat ``seat`` owns Orient pair card ``card`` attached to its purchased card ``host``."""
        self.give(seat, card)
        self._d["players"][seat]["pairs"][str(card)] = int(host)
        return self

    def box(self, *cards: int) -> Position:
        """``cards`` are back in the box (sacrificed or spent; Orient games only)."""
        for c in cards:
            self._take(c)
            self._d["boxed"].append(int(c))
        return self

    def slot(self, m: int, card: int) -> Position:
        """Put ``card`` face up in market slot ``m``.

        If ``card`` is face up in another slot of the same row the two swap;
        otherwise it comes out of its deck and the card it displaces goes to
        the bottom of that deck. No slot is left empty.
        """
        row, k, deck = self._row(m)
        lvl = m // st.MARKET_SLOTS if m < st.BASE_SLOTS else (m - st.BASE_SLOTS) // st.ORIENT_SLOTS
        if (card >= NUM_CARDS) != (m >= st.BASE_SLOTS) or ALL_CARD_LEVEL[card] != lvl:
            raise ValueError(f"card {card} (level {ALL_CARD_LEVEL[card] + 1}) does not belong in slot {m}")
        if card in row:
            j = row.index(card)
            row[j], row[k] = row[k], card
            return self
        if card not in deck:
            raise ValueError(f"card {card} is not in its deck any more (placed twice?)")
        deck.remove(card)
        if row[k] >= 0:
            deck.insert(0, row[k])
        row[k] = int(card)
        return self

    def empty_slot(self, m: int) -> Position:
        """Leave market slot ``m`` empty (its card goes to the bottom of its deck)."""
        row, k, deck = self._row(m)
        if row[k] >= 0:
            deck.insert(0, row[k])
        row[k] = -1
        return self

    def top(self, deck: int, card: int) -> Position:
        """Put ``card`` on top of deck ``deck`` (0-2 base, 3-5 Orient)."""
        self._take(card)
        self._deck(deck).append(int(card))
        return self

    def deck_size(self, deck: int, n: int, to: int | str | None = None) -> Position:
        """Shrink deck ``deck`` to its top ``n`` cards.

        Every card must be somewhere: the cut cards become purchases of seat
        ``to`` (default: the last seat), or go to the box with ``to="box"``
        (Orient games only).
        """
        cards = self._deck(deck)
        if n > len(cards):
            raise ValueError(f"deck {deck} has only {len(cards)} cards, asked for {n}")
        cut = cards[: len(cards) - n]
        del cards[: len(cards) - n]
        if to == "box":
            self._d["boxed"].extend(cut)
        else:
            seat = self.num_players - 1 if to is None else int(to)
            self._d["players"][seat]["purchased"].extend(cut)
        return self

    # -- tokens --------------------------------------------------------------
    def tokens(self, seat: int, spec: TokenSpec) -> Position:
        """Seat ``seat`` holds exactly ``spec`` (e.g. ``"3W 1*"``)."""
        self._tokens[seat] = tokens6(spec)
        return self

    def bank(self, spec: TokenSpec) -> Position:
        """The bank holds exactly ``spec`` (colours not named: none).

        Without a call the bank holds every token no player was given. With
        it, the tokens neither in the bank nor in a :meth:`tokens` hand are
        shared out between the seats without one, other than the seat on move
        (who holds nothing unless told).
        """
        self._bank = tokens6(spec)
        return self

    # -- nobles and module pieces ---------------------------------------------
    def nobles(self, *offer: int) -> Position:
        """The nobles on offer (none with no argument); the rest are out of the game."""
        self._offer = [int(n) for n in offer]
        return self

    def noble(self, seat: int, noble: int) -> Position:
        """Seat ``seat`` already has ``noble`` (listed after the ones on offer)."""
        self._owned_nobles.append((int(noble), seat))
        return self

    def cities(self, *cities: int) -> Position:
        """The city tiles on offer (Cities games)."""
        self._d["cities"] = [{"city": int(c), "owner": None} for c in cities]
        return self

    def city(self, seat: int, city: int) -> Position:
        """Seat ``seat`` has already claimed ``city`` (listed after the ones on offer)."""
        self._d["cities"].append({"city": int(city), "owner": seat})
        return self

    def trading_posts(self, seat: int, *names: str) -> Position:
        """Seat ``seat`` holds these trading posts (names of ``cards.TRADING_POSTS``)."""
        self._d["players"][seat]["trading_posts"] = list(names)
        return self

    def stronghold(self, m: int, seat: int, count: int = 1) -> Position:
        """``count`` of seat ``seat``'s strongholds stand on market slot ``m`` (taken from its supply)."""
        self._d["strongholds"].append([m, seat, count])
        self._d["players"][seat]["stronghold_supply"] -= count
        return self

    # -- whose turn, which phase ----------------------------------------------
    def current(self, seat: int) -> Position:
        """Seat ``seat`` is on move (the turn counter follows unless :meth:`turn` is given)."""
        self._current = seat
        return self

    def turn(self, n: int) -> Position:
        """``n`` completed turns (the seat on move is ``n % num_players``)."""
        self._turn = n
        return self

    def final_round(self, on: bool = True) -> Position:
        """Someone has reached the end trigger: this is the final round."""
        self._d["final_round"] = on
        return self

    def passes(self, n: int) -> Position:
        """``n`` pass turns in a row so far."""
        self._d["consecutive_passes"] = n
        return self

    def phase(self, name: str, **pending: int) -> Position:
        """The game is in phase ``name``; module games may set ``pending`` fields by snapshot name."""
        self._d["phase"] = name
        if pending:
            self._d["pending"].update(pending)
        return self

    # -- reading the position under construction -------------------------------
    def deck(self, deck: int) -> list[int]:
        """Deck ``deck`` as it stands now, bottom first (the last id is the top card)."""
        return list(self._deck(deck))

    # -- the result --------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The position as a snapshot dict (a copy; editing it does not change the builder)."""
        d = copy.deepcopy(self._d)
        n = self.num_players
        for p in range(n):
            d["players"][p]["purchased"] = sorted(d["players"][p]["purchased"])

        offer = (
            [e["noble"] for e in d["nobles"] if e["owner"] is None] if self._offer is None else self._offer
        )
        d["nobles"] = [{"noble": k, "owner": None} for k in offer]
        d["nobles"] += [{"noble": k, "owner": p} for k, p in self._owned_nobles]

        total = [st.GEMS_FOR_PLAYERS[n]] * 5 + [st.GOLD_TOKENS]
        held = [sum(t[c] for t in self._tokens.values()) for c in range(6)]
        if self._bank is None:
            bank6, rest = [total[c] - held[c] for c in range(6)], [0] * 6
        else:
            bank6 = self._bank
            rest = [total[c] - held[c] - bank6[c] for c in range(6)]
        if min(bank6) < 0 or min(rest) < 0:
            raise ValueError(f"more tokens than exist: bank {bank6}, held {held}, total {total}")
        others = [p for p in range(n) if p not in self._tokens and p != self._current]
        if any(rest) and not others:
            raise ValueError(f"tokens {rest} are in neither the bank nor a player's hands")
        hands = {p: list(self._tokens.get(p, [0] * 6)) for p in range(n)}
        for c in range(6):
            for i in range(rest[c]):
                hands[others[i % len(others)]][c] += 1
        d["bank"] = _as_dict(bank6)
        for p in range(n):
            d["players"][p]["tokens"] = _as_dict(hands[p])

        turn = self._turn
        if turn is None:  # the seat on move is turn % num_players (the last mover once the game is over)
            turn = self._current + (1 if d["phase"] in ("game_over", "truncated") else 0)
        d.update(current_player=self._current, turn=turn, winners=[])
        return d

    def build(self) -> np.ndarray:
        """The validated state array (``from_dict`` of :meth:`snapshot`)."""
        return from_dict(self.snapshot())


def make_snapshot(
    num_players: int = 2,
    *,
    seed: int = 0,
    bank: TokenSpec | None = None,
    tokens: Mapping[int, TokenSpec] | None = None,
    purchased: Mapping[int, Iterable[int]] | None = None,
    reserved: Mapping[int, Iterable[ReserveSpec]] | None = None,
    market: Mapping[tuple[int, int], int] | None = None,
    deck_sizes: Mapping[int, int] | None = None,
    sink_seat: int | None = None,
    nobles: Iterable[int] | None = None,
    player_nobles: Mapping[int, Iterable[int]] | None = None,
    current: int = 0,
    phase: str = "main",
    turn: int | None = None,
    final_round: bool = False,
    passes: int = 0,
    max_turns: int = st.DEFAULT_MAX_TURNS,
) -> dict[str, Any]:
    """The keyword form of :class:`Position` (base games), as a snapshot dict.

    ``purchased`` / ``reserved`` are per seat (reserved entries: a card id,
    face up, or ``(card, blind)``); ``market`` maps ``(level, slot)`` to a card
    id or -1 (empty); ``deck_sizes`` ``{level: n}`` cuts decks, the cut cards
    going to ``sink_seat`` (default: the last seat); ``player_nobles`` gives
    nobles already taken, per seat. The rest is as in :class:`Position`.
    """
    pos = Position(num_players, seed=seed, max_turns=max_turns)
    for p, cards in (purchased or {}).items():
        pos.give(p, *cards)
    for p, items in (reserved or {}).items():
        for x in items:
            card, blind = (x, False) if isinstance(x, (int, np.integer)) else x
            pos.reserve(p, int(card), bool(blind))
    for (lvl, k), card in (market or {}).items():
        m = lvl * st.MARKET_SLOTS + k
        if card >= 0:
            pos.slot(m, card)
        else:
            pos.empty_slot(m)
    for lvl, n in (deck_sizes or {}).items():
        pos.deck_size(lvl, n, to=sink_seat)
    for p, spec in (tokens or {}).items():
        pos.tokens(p, spec)
    if bank is not None:
        pos.bank(bank)
    if nobles is not None:
        pos.nobles(*nobles)
    for p, ns in (player_nobles or {}).items():
        for k in ns:
            pos.noble(p, k)
    pos.current(current).phase(phase).final_round(final_round).passes(passes)
    if turn is not None:
        pos.turn(turn)
    return pos.snapshot()


def make_state(num_players: int = 2, **kw: Any) -> np.ndarray:
    """A validated state array for :func:`make_snapshot`'s keyword position."""
    return from_dict(make_snapshot(num_players, **kw))
