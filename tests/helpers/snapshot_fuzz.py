"""Snapshot mutation campaign: corrupt valid snapshots at random, check each is refused clearly or valid.

Why: ``from_dict`` is the door through which user data reaches compiled rules that
do not bounds-check. Every mutated snapshot must end one of two ways:

* **refused** with one :class:`~splendor_env.snapshot.SnapshotError` line that
  names a field path (``snapshot["..."]...``); any other exception is a crash and
  an error without a path is *unclear*;
* **accepted**, and then genuinely valid: it writes back to exactly the dict it
  was read from (nothing defaulted, coerced or written elsewhere; derived fields
  aside), passes the state invariants, and a few random legal moves from it keep
  them.

Run the full campaign (the issue's target is 100,000 mutations)::

    python -m tests.helpers.snapshot_fuzz --mutations 100000 --seed 0

``tests/test_snapshot_validation.py`` runs a smaller count in the default suite.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import num_actions
from splendor_env.deal import new_state
from splendor_env.invariants import check_invariants
from splendor_env.snapshot import SnapshotError, from_dict, to_dict

MODULE_COMBOS = [
    combo for r in range(len(st.MODULE_NAMES) + 1) for combo in itertools.combinations(st.MODULE_NAMES, r)
]


def random_state(rng: np.random.Generator, num_players: int, modules: tuple[str, ...]) -> np.ndarray:
    """A reachable state: a random deal played forward a random number of random legal moves."""
    s = new_state(num_players, int(rng.integers(2**31)), modules=modules)
    mask = np.zeros(num_actions(int(s[st.MODULES])), dtype=np.int8)
    for _ in range(int(rng.integers(0, 400))):
        if rules.is_over(s):
            break
        rules.legal_mask(s, mask)
        rules.apply_action(s, int(rng.choice(np.flatnonzero(mask))))
    return s


def snapshot_pool(rng: np.random.Generator, size: int) -> list[dict[str, Any]]:
    """Valid snapshots of 2-4 players, with and without modules (each one checked to load)."""
    pool = []
    for i in range(size):
        mods = MODULE_COMBOS[i % len(MODULE_COMBOS)] if i % 3 else ()
        s = random_state(rng, 2 + i % 3, mods)
        d = to_dict(s)
        assert np.array_equal(from_dict(d), s), "a reachable state must load"
        pool.append(json.loads(json.dumps(d)))
    return pool


# -- mutations -------------------------------------------------------------------------------


def _paths(node: Any, path: tuple = ()) -> list[tuple]:
    """Every path to a value (containers included) inside a snapshot."""
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, path + (i,))
    return out


def _get(d: Any, path: tuple) -> Any:
    for k in path:
        d = d[k]
    return d


_WEIRD = [None, True, False, "", "3", "x", 1.5, -0.0, float("nan"), float("inf"), [], {}, [1, 2], {"a": 1}]
_INTS = [
    -(2**63),
    -(2**31) - 1,
    -1000,
    -3,
    -2,
    -1,
    0,
    1,
    2,
    3,
    4,
    7,
    10,
    15,
    99,
    119,
    120,
    10**6,
    2**31,
    2**32,
    2**63,
]


def _new_value(rng: np.random.Generator, old: Any) -> Any:
    r = rng.random()
    if isinstance(old, bool):
        return _WEIRD[rng.integers(len(_WEIRD))] if r < 0.5 else int(old)
    if isinstance(old, int):
        if r < 0.35:
            return old + int(rng.choice([-2, -1, 1, 2]))
        if r < 0.55:
            return int(rng.choice(_INTS))
        if r < 0.7:
            return int(rng.integers(-5, 125))
        if r < 0.8:
            return float(old) + float(rng.choice([0.0, 0.9]))
        if r < 0.85:
            return str(old)
        return _WEIRD[rng.integers(len(_WEIRD))]
    if isinstance(old, str):
        choices = list(st.PHASE_NAMES) + list(st.MODULE_NAMES) + ["points", "draw_two", "nope", "MAIN"]
        return choices[rng.integers(len(choices))] if r < 0.7 else _WEIRD[rng.integers(len(_WEIRD))]
    return _WEIRD[rng.integers(len(_WEIRD))]


def mutate(d: dict[str, Any], rng: np.random.Generator) -> tuple[dict[str, Any], str]:
    """A deep copy of ``d`` with one random corruption; returns it and a description."""
    d = copy.deepcopy(d)
    paths = _paths(d)[1:]
    path = paths[rng.integers(len(paths))]
    parent, key = _get(d, path[:-1]), path[-1]
    old = parent[key]
    kind = rng.integers(10)
    if kind <= 3:
        parent[key] = _new_value(rng, old)
        return d, f"set {path} {old!r} -> {parent[key]!r}"
    if kind == 4 and isinstance(parent, dict):
        del parent[key]
        return d, f"delete {path}"
    if kind == 4:
        parent.pop(key)
        return d, f"pop {path}"
    if kind == 5 and isinstance(parent, list):
        parent.insert(int(rng.integers(len(parent) + 1)), copy.deepcopy(old))
        return d, f"duplicate {path}"
    if kind == 5:
        extra = str(rng.choice(["extra", "Turn", "180", "-1", "95", "119", "0"]))
        parent[extra] = _new_value(rng, 1)
        return d, f"add key {extra!r} at {path[:-1]}"
    if kind == 6:
        other = paths[rng.integers(len(paths))]
        oparent, okey = _get(d, other[:-1]), other[-1]
        if other[: len(path)] != path and path[: len(other)] != other:
            parent[key], oparent[okey] = oparent[okey], parent[key]
            return d, f"swap {path} <-> {other}"
        parent[key] = _new_value(rng, old)
        return d, f"set {path}"
    if kind == 7 and isinstance(old, int) and not isinstance(old, bool):
        parent[key] = int(rng.integers(-3, 125))
        return d, f"set {path} {old} -> {parent[key]}"
    if kind == 8 and isinstance(parent, dict) and "pairs" in path[:-1]:
        parent[str(rng.choice(["95", "119", "1000", "-5", "x", "200000"]))] = parent.pop(key)
        return d, f"rekey {path}"
    if kind == 8 and path[-1] == "pairs" or kind == 9 and isinstance(old, dict) and "pairs" in path:
        old[str(int(rng.integers(-5, 3000)))] = int(rng.integers(-3, 125))
        return d, f"add pair at {path}"
    parent[key] = _new_value(rng, old)
    return d, f"set {path} {old!r} -> {parent[key]!r}"


# -- the oracle ------------------------------------------------------------------------------

_DERIVED = ("bonuses", "prestige", "nobles")


def normalise(d: dict[str, Any]) -> str:
    """A snapshot without its derived fields and with its unordered lists sorted, as canonical JSON."""
    d = copy.deepcopy(d)
    for pl in d.get("players", []):
        if isinstance(pl, dict):
            for k in _DERIVED:
                pl.pop(k, None)
            for k in ("purchased", "trading_posts"):
                if isinstance(pl.get(k), list):
                    pl[k] = sorted(pl[k], key=repr)
    for k in ("boxed", "strongholds"):
        if isinstance(d.get(k), list):
            d[k] = sorted(d[k], key=repr)
    if isinstance(d.get("winners"), list):
        d["winners"] = sorted(d["winners"], key=repr)
    return json.dumps(d, sort_keys=True, default=repr)


def clear_message(message: str) -> bool:
    """One line, naming a field path of the snapshot."""
    return "\n" not in message and message.startswith("snapshot[")


def still_valid(s: np.ndarray, rng: np.random.Generator, moves: int = 6) -> list[str]:
    """Invariant problems of ``s`` and of a few random legal moves played from it (empty = fine)."""
    s = s.copy()
    problems = check_invariants(s)
    mask = np.zeros(num_actions(int(s[st.MODULES])), dtype=np.int8)
    for _ in range(moves):
        if problems or rules.is_over(s):
            break
        if rules.legal_mask(s, mask) == 0:
            return ["no legal action"]
        rules.apply_action(s, int(rng.choice(np.flatnonzero(mask))))
        problems = check_invariants(s)
    return problems


@dataclass
class Outcome:
    """Counts of a campaign, and the first few failures of each kind with the mutation that caused them."""

    counts: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def record(self, kind: str, detail: str = "") -> None:
        self.counts[kind] += 1
        if kind not in ("accepted", "refused") and len(self.examples.setdefault(kind, [])) < 5:
            self.examples[kind].append(detail)

    @property
    def failures(self) -> int:
        return sum(v for k, v in self.counts.items() if k not in ("accepted", "refused"))


def check_mutation(d: dict[str, Any], what: str, rng: np.random.Generator, out: Outcome) -> None:
    try:
        s = from_dict(d)
    except SnapshotError as exc:
        kind = "refused" if clear_message(str(exc)) else "unclear"
        out.record(kind, f"{what}: {exc}")
        return
    except Exception as exc:  # noqa: BLE001 - any other exception is the bug being hunted
        out.record("crash", f"{what}: {type(exc).__name__}: {exc}")
        return
    if normalise(to_dict(s)) != normalise(d):
        out.record("accepted_changed", what)
        return
    problems = still_valid(s, rng)
    if problems:
        out.record("accepted_invalid", f"{what}: {problems[0]}")
        return
    out.record("accepted")


def campaign(mutations: int, seed: int = 0, pool_size: int = 240) -> Outcome:
    rng = np.random.default_rng(seed)
    pool = snapshot_pool(rng, pool_size)
    out = Outcome()
    for i in range(mutations):
        d, what = mutate(pool[i % len(pool)], rng)
        if rng.random() < 0.3:  # a second corruption: some bugs need two
            d, what2 = mutate(d, rng)
            what = f"{what}; {what2}"
        check_mutation(d, what, rng, out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mutations", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.mutations < 1 or args.seed < 0:
        parser.error("--mutations must be >= 1 and --seed >= 0")
    start = time.perf_counter()
    out = campaign(args.mutations, args.seed)
    elapsed = time.perf_counter() - start
    print(f"{args.mutations} mutations (seed {args.seed}) in {elapsed:.1f} s: {dict(out.counts)}")
    for kind, examples in out.examples.items():
        print(f"{kind}:")
        for e in examples:
            print(f"  {e}")
    return 1 if out.failures else 0


if __name__ == "__main__":
    sys.exit(main())
