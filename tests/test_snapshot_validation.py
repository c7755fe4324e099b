"""Strict snapshot validation (issue 13): each corruption the fuzz campaign found, refused with one line
naming the field path, the env left exactly as it was; plus a property test and a small mutation run."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as hs

import splendor_env
from splendor_env import state as st
from splendor_env.deal import new_state
from splendor_env.snapshot import SnapshotError, from_array, from_dict, to_dict
from tests.helpers.snapshot_fuzz import campaign, clear_message, mutate, normalise, random_state, still_valid

MODS = ("cities", "trading_posts", "orient", "strongholds")


def _base() -> dict:
    return to_dict(new_state(2, seed=0))


def _mods() -> dict:
    return to_dict(new_state(3, seed=1, modules=MODS))


def _set(path, value):
    def edit(d):
        node = d
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value

    return edit


def _delete(key):
    return lambda d: d.pop(key)


CASES = [
    # missing keys no longer default
    ("base", _delete("turn"), r'^snapshot\["turn"\]: missing'),
    ("base", _delete("phase"), r'^snapshot\["phase"\]: missing'),
    ("base", _delete("current_player"), r'^snapshot\["current_player"\]: missing'),
    ("base", _delete("final_round"), r'^snapshot\["final_round"\]: missing'),
    ("base", _delete("max_turns"), r'^snapshot\["max_turns"\]: missing'),
    ("mods", _delete("cities"), r'^snapshot\["cities"\]: missing'),
    ("mods", _delete("pending"), r'^snapshot\["pending"\]: missing'),
    ("mods", lambda d: d["pending"].pop("stage"), r'^snapshot\["pending"\]\["stage"\]: missing'),
    (
        "base",
        lambda d: d["players"][0].pop("reserved"),
        r'^snapshot\["players"\]\[0\]\["reserved"\]: missing',
    ),
    ("base", _set(("extra",), 1), r'^snapshot\["extra"\]: unknown key'),
    # types: bools are bools, ints are ints
    ("base", _set(("final_round",), "no"), r'^snapshot\["final_round"\]: expected true or false'),
    ("base", _set(("final_round",), 0), r'^snapshot\["final_round"\]: expected true or false'),
    (
        "base",
        _set(("market", 0, 0), 15.9),
        r'^snapshot\["market"\]\[0\]\[0\]: expected an integer in 0..89, got 15.9',
    ),
    (
        "base",
        _set(("market", 0, 0), "15"),
        r"^snapshot\[\"market\"\]\[0\]\[0\]: expected an integer in 0..89, got '15'",
    ),
    ("base", _set(("turn",), 3.0), r'^snapshot\["turn"\]: expected an integer'),
    (
        "base",
        _set(("players", 1, "tokens", "red"), 15.9),
        r'^snapshot\["players"\]\[1\]\["tokens"\]\["red"\]: expected an integer in 0..4, got 15.9',
    ),
    (
        "base",
        lambda d: d["players"][0]["reserved"].append({"card": d["decks"][0].pop(), "blind": "yes"}),
        r'\["reserved"\]\[0\]\["blind"\]: expected true or false',
    ),
    # ranges and ids
    (
        "base",
        _set(("nobles", 0, "noble"), -3),
        r'^snapshot\["nobles"\]\[0\]\["noble"\]: expected an integer in 0..9, got -3',
    ),
    (
        "base",
        _set(("consecutive_passes",), 99),
        r'^snapshot\["consecutive_passes"\]: expected an integer in 0..2, got 99',
    ),
    ("base", _set(("turn",), 10**6), r'^snapshot\["turn"\]: expected an integer in 0..1000, got 1000000'),
    ("base", _set(("max_turns",), 2**31), r'^snapshot\["max_turns"\]: expected an integer in 1..2147483647'),
    ("base", _set(("num_players",), 2**40), r'^snapshot\["num_players"\]: expected an integer in 2..4'),
    (
        "base",
        _set(("players", 0, "purchased"), [2**63]),
        r'\["purchased"\]\[0\]: expected an integer in 0..89',
    ),
    ("base", _set(("phase",), "strongholds"), r'^snapshot\["phase"\]: unknown phase'),
    ("base", _set(("phase",), "city"), r"exists only with modules"),
    # the pair-card key that wrote into another field
    (
        "mods",
        _set(("players", 0, "pairs"), {"100000": 5}),
        r'^snapshot\["players"\]\[0\]\["pairs"\]\["100000"\]: key',
    ),
    ("mods", _set(("players", 0, "pairs"), {"-40": 5}), r'\["pairs"\]\["-40"\]: key'),
    ("mods", _set(("players", 0, "pairs"), {"x": 5}), r'\["pairs"\]\["x"\]: key'),
    # structure errors that used to leak IndexError / unpacking / tuple.index messages
    (
        "mods",
        _set(("strongholds",), [[0, 0]]),
        r'^snapshot\["strongholds"\]\[0\]: expected a list of 3 entries',
    ),
    (
        "mods",
        _set(("players", 0, "trading_posts"), ["nope"]),
        r'\["trading_posts"\]\[0\]: unknown trading post',
    ),
    ("base", _set(("market",), [[1, 2, 3, 4]]), r'^snapshot\["market"\]: expected a list of 3 entries'),
    ("base", _set(("players",), None), r'^snapshot\["players"\]: expected a list'),
    ("base", _set(("bank",), [4, 4, 4, 4, 4, 5]), r'^snapshot\["bank"\]: expected a dict'),
    # cross-field consistency
    (
        "base",
        _set(("current_player",), 1),
        r'^snapshot\["current_player"\]: seat 1 cannot be on move after 0 turn',
    ),
    ("base", _set(("phase",), "game_over"), r'^snapshot\["turn"\]: a game that is game_over'),
    ("base", lambda d: d.update(phase="game_over", turn=1), r'^snapshot\["phase"\]: game_over needs'),
    (
        "base",
        lambda d: d.update(phase="truncated", turn=1, current_player=0),
        r'^snapshot\["turn"\]: a truncated game',
    ),
    (
        "base",
        _set(("consecutive_passes",), 1),
        r'^snapshot\["consecutive_passes"\]: 1 consecutive passes in only 0',
    ),
    ("base", _set(("winners",), [0]), r'^snapshot\["winners"\]: winners \[0\] set before the game is over'),
    ("mods", _set(("final_round",), True), r'^snapshot\["final_round"\]: with Cities'),
    (
        "mods",
        _set(("pending", "stage"), 3),
        r'^snapshot\["pending"\]\["stage"\]: expected stage 0 in phase main',
    ),
    ("mods", _set(("pending", "refill_slots"), 1), r'^snapshot\["pending"\]\["refill_slots"\]'),
    (
        "mods",
        _set(("pending", "pair_card"), 5),
        r'^snapshot\["pending"\]\["pair_card"\]: card 5 is not an Orient pair card',
    ),
    ("base", lambda d: d["decks"][0].pop(), r'^snapshot\["decks"\]: cards missing'),
    ("base", lambda d: d["bank"].update(gold=4), r'^snapshot\["bank"\]\["gold"\]: gold tokens not conserved'),
    (
        "base",
        lambda d: d["players"][0]["reserved"].append({"card": d["market"][0][0], "blind": False}),
        r"card \d+ is in two places: also at snapshot\[\"market\"\]\[0\]\[0\]",
    ),
    # module fields vs the module set
    ("base", _set(("cities",), []), r'^snapshot\["cities"\]: unknown key'),
    ("mods", _set(("modules",), ["orient", "nope"]), r'^snapshot\["modules"\]\[1\]: unknown module'),
    ("mods", _set(("modules",), ["orient", "orient"]), r"listed twice"),
    (
        "mods",
        lambda d: d.update(modules=["orient"]),
        r'^snapshot\["cities"\]: expected a list of 0 entries, got 3',
    ),
]


@pytest.mark.parametrize("which,edit,match", CASES)
def test_bad_snapshot_refused_naming_the_field_and_env_unchanged(which: str, edit, match: str) -> None:
    d = copy.deepcopy(_base() if which == "base" else _mods())
    edit(d)
    with pytest.raises(SnapshotError, match=match) as info:
        from_dict(d)
    assert "\n" not in str(info.value)
    e = splendor_env.raw_env(num_players=d_players(which), modules=() if which == "base" else MODS)
    e.reset(seed=7)
    before_state, before_obs = e.engine_state(), e.observe(e.agent_selection)["observation"]
    with pytest.raises(SnapshotError):
        e.restore(d)
    assert np.array_equal(e.engine_state(), before_state)
    assert np.array_equal(e.observe(e.agent_selection)["observation"], before_obs)


def d_players(which: str) -> int:
    return 2 if which == "base" else 3


@pytest.mark.parametrize(
    "bad", [None, 3, "snapshot", [1, 2], np.zeros(5, dtype=np.int32), np.zeros(10, dtype=float)]
)
def test_restore_of_a_non_snapshot_is_a_clear_error(bad) -> None:
    e = splendor_env.env()
    e.reset(seed=0)
    before = e.engine_state()
    with pytest.raises(SnapshotError, match=r"^(snapshot|state)"):
        e.restore(bad)
    assert np.array_equal(e.engine_state(), before)


def test_restore_of_a_state_array_is_as_strict_as_a_snapshot() -> None:
    e = splendor_env.env()
    e.reset(seed=0)
    bad = e.engine_state()
    bad[st.TURN] = 1  # seat 0 on move after one turn
    with pytest.raises(SnapshotError, match=r"current_player"):
        e.restore(bad)
    assert np.array_equal(from_array(e.engine_state()), e.engine_state())


def test_old_format_without_modules_key_is_a_base_game() -> None:
    d = _base()
    assert "modules" not in d
    assert np.array_equal(from_dict(d), new_state(2, seed=0))
    d["modules"] = []
    assert np.array_equal(from_dict(d), new_state(2, seed=0))


def test_snapshot_functions_are_importable_from_the_package_not_the_state_file() -> None:
    assert splendor_env.to_dict is to_dict and splendor_env.from_dict is from_dict
    assert splendor_env.new_state is new_state
    # state.py is below the snapshots and the deal: it no longer forwards their names (no import circle)
    assert not any(hasattr(st, name) for name in ("to_dict", "from_dict", "new_state", "setup"))
    assert issubclass(SnapshotError, ValueError)


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("mods", [(), ("orient",), ("cities", "strongholds"), MODS])
def test_reachable_states_load_and_round_trip(n: int, mods: tuple[str, ...]) -> None:
    rng = np.random.default_rng(n * 17 + len(mods))
    for _ in range(4):
        s = random_state(rng, n, mods)
        d = json.loads(json.dumps(to_dict(s)))
        assert np.array_equal(from_dict(d), s)
        assert np.array_equal(from_array(s), s)


@given(
    seed=hs.integers(0, 2**31),
    n=hs.integers(2, 4),
    mods=hs.sampled_from([(), ("orient",), ("trading_posts",), ("cities",), ("strongholds", "orient"), MODS]),
)
def test_property_mutated_snapshot_is_valid_or_refused_with_env_unchanged(seed: int, n: int, mods) -> None:
    """Restored and valid, or refused with the env unchanged and a message naming a field."""
    rng = np.random.default_rng(seed)
    d = json.loads(json.dumps(to_dict(random_state(rng, n, mods))))
    e = splendor_env.raw_env(num_players=n, modules=mods)
    e.reset(seed=seed)
    for _ in range(20):
        bad, what = mutate(d, rng)
        before = e.engine_state()
        try:
            e.restore(bad)
        except SnapshotError as exc:
            assert clear_message(str(exc)), f"{what}: unclear {exc}"
            assert np.array_equal(e.engine_state(), before), what
            continue
        assert normalise(e.snapshot()) == normalise(bad), what
        assert still_valid(e.engine_state(), rng) == [], what


@pytest.mark.slow
def test_mutation_campaign_small() -> None:
    """A 2,000-mutation run of tests/snapshot_fuzz.py (the full run is 100,000; see the README)."""
    out = campaign(2_000, seed=1, pool_size=48)
    assert out.failures == 0, out.examples
    assert out.counts["refused"] > 1000 and out.counts["accepted"] > 0
