"""Building Cities of Splendor positions for the module tests.

A position starts from a dealt game (``new_state(..., modules=...)``), goes
through its JSON snapshot, is edited (cards moved, tokens handed out, trading
posts and strongholds placed) and is rebuilt with ``from_dict``, which
recomputes bonuses and prestige and checks every invariant. So a test sets up
exactly the situation a rule talks about, and nothing it sets up can be an
impossible game.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import num_actions
from splendor_env.cards import ALL_CARD_LEVEL, CARD_COLOUR, CARD_LEVEL, TOKEN_COLOURS

ALL = st.MODULE_NAMES


def base_cards(colour: int, level: int = 0) -> list[int]:
    """Base card ids of one colour and level (level 0 = level 1)."""
    return [c for c in range(90) if CARD_COLOUR[c] == colour and CARD_LEVEL[c] == level]


class Position:
    """A mutable snapshot with helpers; ``build()`` returns the checked state array."""

    def __init__(self, modules: tuple[str, ...], num_players: int = 2, seed: int = 0, nobles: bool = False):
        self.d: dict[str, Any] = st.to_dict(st.new_state(num_players, seed, modules=modules))
        if not nobles:
            self.d["nobles"] = []

    # -- moving cards --------------------------------------------------------
    def pull(self, card: int) -> None:
        """Take ``card`` out of wherever it is (deck or market slot, the slot is left empty)."""
        for key in ("decks", "orient_decks"):
            for deck in self.d.get(key, []):
                if card in deck:
                    deck.remove(card)
                    return
        for key in ("market", "orient_market"):
            for row in self.d.get(key, []):
                if card in row:
                    row[row.index(card)] = -1
                    return
        raise AssertionError(f"card {card} is not in a deck or the market")

    def slot(self, m: int, card: int) -> Position:
        """Put ``card`` face up in market slot ``m`` (0-11 base, 12-17 Orient).

        The card that was there takes the moved card's old place (its market
        slot, or the bottom of its deck), so no slot is left empty.
        """
        assert (card >= 90) == (m >= 12), "Orient cards go to the Orient market, base cards to the base one"
        assert ALL_CARD_LEVEL[card] == (m // 4 if m < 12 else (m - 12) // 2)
        if m < 12:
            row, k, deck = self.d["market"][m // 4], m % 4, self.d["decks"][m // 4]
        else:
            lvl = (m - 12) // 2
            row, k, deck = self.d["orient_market"][lvl], (m - 12) % 2, self.d["orient_decks"][lvl]
        if card in row:
            j = row.index(card)
            row[j], row[k] = row[k], card
            return self
        self.pull(card)
        if row[k] >= 0:
            deck.insert(0, row[k])
        row[k] = card
        return self

    def empty_slot(self, m: int) -> Position:
        """Leave market slot ``m`` empty (its card goes under its deck)."""
        if m < 12:
            row, k, deck = self.d["market"][m // 4], m % 4, self.d["decks"][m // 4]
        else:
            row, k, deck = (
                self.d["orient_market"][(m - 12) // 2],
                (m - 12) % 2,
                self.d["orient_decks"][(m - 12) // 2],
            )
        if row[k] >= 0:
            deck.insert(0, row[k])
        row[k] = -1
        return self

    def top(self, deck: int, card: int) -> Position:
        """Put ``card`` on top of deck ``deck`` (0-2 base, 3-5 Orient)."""
        self.pull(card)
        key, lvl = ("decks", deck) if deck < 3 else ("orient_decks", deck - 3)
        self.d[key][lvl].append(card)
        return self

    def give(self, p: int, *cards: int) -> Position:
        """Seat ``p`` has purchased ``cards``."""
        for c in cards:
            self.pull(c)
            self.d["players"][p]["purchased"].append(c)
        return self

    def box(self, *cards: int) -> Position:
        for c in cards:
            self.pull(c)
            self.d["boxed"].append(c)
        return self

    def pair(self, p: int, card: int, host: int) -> Position:
        """Seat ``p`` owns pair card ``card`` attached to its card ``host``."""
        self.give(p, card)
        self.d["players"][p]["pairs"][str(card)] = host
        return self

    def reserve(self, p: int, card: int, blind: bool = False) -> Position:
        self.pull(card)
        self.d["players"][p]["reserved"].append({"card": card, "blind": blind})
        return self

    # -- tokens, tiles, strongholds -------------------------------------------
    def tokens(self, p: int, **counts: int) -> Position:
        """Set seat ``p``'s tokens (by colour name); the bank pays or receives the difference."""
        for name, n in counts.items():
            old = self.d["players"][p]["tokens"][name]
            self.d["players"][p]["tokens"][name] = n
            self.d["bank"][name] -= n - old
            assert self.d["bank"][name] >= 0, f"bank has too few {name}"
        return self

    def bank(self, **counts: int) -> Position:
        """Set the bank's count of a colour; the difference goes to/comes from the last seat."""
        last = self.d["players"][-1]["tokens"]
        for name, n in counts.items():
            diff = self.d["bank"][name] - n
            self.d["bank"][name] = n
            last[name] += diff
            assert last[name] >= 0
        return self

    def trading_posts(self, p: int, *names: str) -> Position:
        self.d["players"][p]["trading_posts"] = list(names)
        return self

    def stronghold(self, m: int, p: int, count: int = 1) -> Position:
        self.d["strongholds"].append([m, p, count])
        self.d["players"][p]["stronghold_supply"] -= count
        return self

    def city(self, *cities: int) -> Position:
        self.d["cities"] = [{"city": c, "owner": None} for c in cities]
        return self

    def set(self, **fields: Any) -> Position:
        self.d.update(fields)
        return self

    def build(self) -> np.ndarray:
        return st.from_dict(self.d)


def legal(s: np.ndarray) -> list[int]:
    """The legal action ids (checked against illegal_reason for every id)."""
    mask = np.zeros(num_actions(int(s[st.MODULES])), dtype=np.int8)
    rules.legal_mask(s, mask)
    ids = np.flatnonzero(mask).tolist()
    for a in range(len(mask)):
        assert (rules.illegal_reason(s, a) == rules.OK) == bool(mask[a]), a
    return ids


def play(s: np.ndarray, *actions: int) -> np.ndarray:
    """Play legal actions in order (failing on an illegal one) and check the invariants after each."""
    for a in actions:
        reason = rules.step_checked(s, a)
        assert reason == 0, f"action {a} illegal: {rules.REASONS[reason] if reason > 0 else reason}"
        problems = st.check_invariants(s)
        assert not problems, problems
    return s


def phase(s: np.ndarray) -> str:
    return st.PHASE_NAMES[s[st.PHASE]]


def tokens_of(s: np.ndarray, p: int) -> list[int]:
    po = st.player_offset(p)
    return s[po + st.P_TOKENS : po + st.P_TOKENS + 6].tolist()


def bonus_of(s: np.ndarray, p: int) -> list[int]:
    po = st.player_offset(p)
    return s[po + st.P_BONUS : po + st.P_BONUS + 5].tolist()


def prestige_of(s: np.ndarray, p: int) -> int:
    return int(s[st.player_offset(p) + st.P_PRESTIGE])


def owner(s: np.ndarray, card: int) -> int:
    return int(s[st.owner_addr(card)])


def colour(name: str) -> int:
    return TOKEN_COLOURS.index(name)
