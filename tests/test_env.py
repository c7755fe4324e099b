"""The PettingZoo AEC env: API conformance, observations, errors, snapshots and rewards."""

from __future__ import annotations

import copy
import json
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, seed_test

import splendor_env
from splendor_env import IllegalActionError, env, raw_env, rules
from splendor_env import state as st
from splendor_env.actions import NUM_ACTIONS, describe
from splendor_env.deal import new_state
from splendor_env.observation import (
    CARD_DIM,
    O_BANK,
    O_ON_MOVE,
    O_SEAT_ONEHOT,
    O_SEATS,
    OBS_DIM,
    S_PRESENT,
    S_RES,
    S_TOKENS,
    SEAT_DIM,
    observe,
)
from splendor_env.snapshot import from_dict, to_dict
from tests.helpers import (
    GOLD,
    G,
    K,
    R,
    U,
    W,
    buy_market,
    buy_reserved,
    discard,
    make_snapshot,
    make_state,
    play,
    reserve_deck,
    take3,
)

CONSTRUCTORS = [env, raw_env]


def seat_block(obs: np.ndarray, rel: int) -> np.ndarray:
    return obs[O_SEATS + rel * SEAT_DIM : O_SEATS + (rel + 1) * SEAT_DIM]


def obs_of(s: np.ndarray, seat: int) -> np.ndarray:
    out = np.empty(OBS_DIM, dtype=np.float32)
    observe(s, seat, out)
    return out


def restored(s: np.ndarray | dict, ctor=raw_env, **kw) -> raw_env:
    snap = s if isinstance(s, dict) else to_dict(s)
    e = ctor(num_players=snap["num_players"], **kw)
    e.reset(seed=0)
    e.restore(snap)
    return e


# ---------------------------------------------------------------------------
# PettingZoo conformance


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("ctor", CONSTRUCTORS, ids=["env", "raw_env"])
def test_pettingzoo_api_test(ctor, n: int) -> None:
    with warnings.catch_warnings():
        # Dict observations with an action mask are PettingZoo's own convention for board games.
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        warnings.filterwarnings("ignore", message="Observation space for each agent probably")
        api_test(ctor(num_players=n), num_cycles=300)


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("ctor", CONSTRUCTORS, ids=["env", "raw_env"])
def test_pettingzoo_seed_test(ctor, n: int) -> None:
    seed_test(lambda: ctor(num_players=n), num_cycles=300)


@pytest.mark.parametrize("env_id", ["splendor-v1", "splendor_v1"])
def test_pettingzoo_make(env_id: str) -> None:
    e = pettingzoo.make("aec", env_id, num_players=3)
    e.reset(seed=1)
    assert e.possible_agents == ["player_0", "player_1", "player_2"]
    assert e.metadata["name"] == "splendor_v1"


def test_pettingzoo_v0_still_makes_the_env_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match="splendor-v1"):
        e = pettingzoo.make("aec", "splendor-v0", num_players=2)
    e.reset(seed=1)
    assert e.metadata["name"] == "splendor_v1"


# ---------------------------------------------------------------------------
# Observations


@pytest.mark.parametrize("n", [2, 3, 4])
def test_observation_dict_shapes_and_masks(n: int) -> None:
    e = env(num_players=n)
    e.reset(seed=5)
    assert e.agent_selection == "player_0"
    for agent in e.agents:
        o = e.observe(agent)
        assert set(o) == {"observation", "action_mask"}
        assert o["observation"].shape == (OBS_DIM,) and o["observation"].dtype == np.float32
        assert o["action_mask"].shape == (NUM_ACTIONS,) and o["action_mask"].dtype == np.int8
        assert e.observation_space(agent).contains(o)
        assert e.action_space(agent).n == NUM_ACTIONS
        if agent == e.agent_selection:
            expected = np.zeros(NUM_ACTIONS, dtype=np.int8)
            rules.legal_mask(e.game_state, expected)
            assert np.array_equal(o["action_mask"], expected) and o["action_mask"].sum() > 0
        else:
            assert not o["action_mask"].any(), "agents not on move get an all-zero mask"


def test_observe_returns_copies() -> None:
    """Mutating a returned observation must not corrupt the env."""
    e = env()
    e.reset(seed=0)
    o = e.observe("player_0")
    o["action_mask"][:] = 0
    o["observation"][:] = -1
    o2 = e.observe("player_0")
    assert o2["action_mask"].any() and o2["observation"].min() >= 0


@pytest.mark.parametrize("n", [2, 3, 4])
def test_observation_is_ego_centric(n: int) -> None:
    """Seat block 0 is the observer, then the others in turn order; absent seats are zero."""
    colours = ("white", "blue", "green", "red")
    tokens = {p: {colours[p]: p + 1} for p in range(n)}  # seat p: p + 1 tokens of colour p
    s = make_state(n, tokens=tokens, current=1)
    for seat in range(n):
        obs = obs_of(s, seat)
        for rel in range(4):
            block = seat_block(obs, rel)
            if rel < n:
                assert block[S_PRESENT] == 1
                p = (seat + rel) % n
                assert block[S_TOKENS : S_TOKENS + 6].tolist() == [float(c == p) * (p + 1) for c in range(6)]
            else:
                assert not block.any(), "absent seats are all zero (present = 0)"
        assert obs[O_SEAT_ONEHOT : O_SEAT_ONEHOT + 4].tolist() == [float(i == seat) for i in range(4)]
        assert obs[O_ON_MOVE] == float(seat == 1)
        assert obs[O_BANK : O_BANK + 6].tolist() == s[st.BANK : st.BANK + 6].tolist()


def _shuffle_decks(s: np.ndarray, seed: int) -> np.ndarray:
    d = to_dict(s)
    rng = np.random.default_rng(seed)
    for deck in d["decks"]:
        rng.shuffle(deck)
    return from_dict(d)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_observation_never_leaks_deck_order(n: int) -> None:
    rng = np.random.default_rng(n)
    s = new_state(n, seed=11)
    for _ in range(12):  # a little into the game, with some cards bought or reserved
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        rules.legal_mask(s, mask)
        rules.apply_action(s, int(rng.choice(np.flatnonzero(mask))))
    other = _shuffle_decks(s, seed=1)
    assert not np.array_equal(s, other), "the decks really differ"
    for seat in range(n):
        assert np.array_equal(obs_of(s, seat), obs_of(other, seat))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_env_observation_hides_opponents_blind_reserve(n: int) -> None:
    a = make_snapshot(n, reserved={1: [(5, True)]})
    b = make_snapshot(n, reserved={1: [(30, True)]})
    ea, eb = restored(a), restored(b)
    for seat in range(n):
        oa, ob = ea.observe(f"player_{seat}")["observation"], eb.observe(f"player_{seat}")["observation"]
        if seat == 1:
            assert not np.array_equal(oa, ob), "the owner sees its blind card"
        else:
            assert np.array_equal(oa, ob), f"seat {seat} must not see seat 1's blind card"
            rel = (1 - seat) % n
            card = seat_block(oa, rel)[S_RES : S_RES + CARD_DIM]
            assert card[:5].tolist() == [1, 1, 1, 0, 0] and not card[5:].any()


# ---------------------------------------------------------------------------
# Illegal and malformed actions


def test_raw_env_illegal_action_raises_and_leaves_state_unchanged() -> None:
    e = raw_env()
    e.reset(seed=0)
    before = e.snapshot()
    bad = buy_market(2, 0)  # a level 3 card with no tokens
    assert not e.observe("player_0")["action_mask"][bad]
    with pytest.raises(IllegalActionError) as info:
        e.step(bad)
    msg = str(info.value)
    assert str(bad) in msg and rules.REASONS[rules.R_CANNOT_AFFORD] in msg
    assert e.snapshot() == before
    assert e.agent_selection == "player_0" and not any(e.terminations.values())
    e.step(take3(W, U, G))  # the game goes on normally
    assert e.agent_selection == "player_1"


def test_raw_env_illegal_in_discard_phase_names_the_reason() -> None:
    e = restored(make_state(2, tokens={0: "3W 3U 3G"}))
    e.step(take3(W, U, G))
    with pytest.raises(IllegalActionError, match="discard"):
        e.step(take3(R, K, W))
    with pytest.raises(IllegalActionError, match=rules.REASONS[rules.R_NO_TOKEN]):
        e.step(discard(K))


@pytest.mark.parametrize("n", [2, 3])
def test_env_illegal_action_terminates_with_penalty(n: int) -> None:
    e = env(num_players=n)
    e.reset(seed=0)
    e.step(take3(W, U, G))
    offender = e.agent_selection
    assert offender == "player_1"
    with pytest.warns(UserWarning, match="[Ii]llegal"):
        e.step(buy_market(2, 0))
    assert all(e.terminations.values())
    assert e.rewards[offender] == -1.0
    assert all(e.rewards[a] == 0.0 for a in e.agents if a != offender)
    assert e._cumulative_rewards[offender] == -1.0
    # Everyone is done: stepping None for each agent empties the game.
    seen = {}
    while e.agents:
        _, reward, term, trunc, _ = e.last()
        seen[e.agent_selection] = reward
        assert term or trunc
        e.step(None)
    assert seen[offender] == -1.0 and all(v == 0.0 for a, v in seen.items() if a != offender)


@pytest.mark.parametrize("ctor", CONSTRUCTORS, ids=["env", "raw_env"])
@pytest.mark.parametrize("action", [-1, NUM_ACTIONS, 1000])
def test_out_of_range_action_raises(ctor, action: int) -> None:
    e = ctor()
    e.reset(seed=0)
    with pytest.raises(IllegalActionError, match=f"{action}.*out of range"):
        e.step(action)
    assert not any(e.terminations.values())


@pytest.mark.parametrize("ctor", CONSTRUCTORS, ids=["env", "raw_env"])
@pytest.mark.parametrize("action", [1.5, 3.0, "3", None, True, False, np.bool_(True), [3]])
def test_wrong_action_type_raises(ctor, action) -> None:
    e = ctor()
    e.reset(seed=0)
    with pytest.raises(TypeError, match="action"):
        e.step(action)
    assert not any(e.terminations.values()) and e.agent_selection == "player_0"


@pytest.mark.parametrize("action", [np.int64(0), np.int32(0), np.array(0)])
def test_numpy_integer_actions_accepted(action) -> None:
    e = raw_env()
    e.reset(seed=0)
    e.step(action)
    assert e.agent_selection == "player_1"


def test_step_and_observe_before_reset_raise() -> None:
    e = raw_env()
    with pytest.raises(RuntimeError, match="reset"):
        e.step(0)
    with pytest.raises(RuntimeError, match="reset"):
        e.observe("player_0")


# ---------------------------------------------------------------------------
# Options and construction


@pytest.mark.parametrize("ctor", CONSTRUCTORS, ids=["env", "raw_env"])
def test_unknown_option_is_named(ctor) -> None:
    with pytest.raises(TypeError, match="colour_blind"):
        ctor(num_players=2, colour_blind=True)


@pytest.mark.parametrize("bad,exc", [(1, ValueError), (5, ValueError), ("2", TypeError), (2.0, TypeError)])
def test_bad_num_players(bad, exc) -> None:
    with pytest.raises(exc, match="num_players"):
        env(num_players=bad)


@pytest.mark.parametrize(
    "options,match",
    [
        ({"reward_mode": "dense"}, "reward_mode"),
        ({"max_turns": 0}, "max_turns"),
        ({"shaping_scale": "big"}, "shaping_scale"),
    ],
)
def test_bad_option_values(options: dict, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        env(**options)


def test_bad_reset_seed() -> None:
    e = env()
    with pytest.raises((ValueError, TypeError), match="seed"):
        e.reset(seed=-1)


# ---------------------------------------------------------------------------
# Rendering and descriptions


def test_render_ansi_shows_the_whole_table() -> None:
    s = make_state(
        2,
        tokens={0: "2W 1U 1*", 1: "3K"},
        purchased={0: [23], 1: [73]},  # green 1 pt; white 5 pts
        reserved={0: [40], 1: [(70, True)]},
        market={(0, 0): 0},
    )
    e = restored(s, render_mode="ansi")
    text = e.render()
    assert isinstance(text, str)
    d = to_dict(s)
    bank = d["bank"]
    assert (
        f"bank: W{bank['white']} U{bank['blue']} G{bank['green']} R{bank['red']} K{bank['black']} *{bank['gold']}"
        in text
    )
    assert "[2R 1K]" in text, "market cards show their cost"
    for row in d["market"]:
        for card in row:
            from splendor_env.render import _card

            assert _card(card).strip() in text
    assert "player_0: 1 prestige" in text and "player_1: 5 prestige" in text
    assert "tokens W2 U1 G0 R0 K0 *1" in text and "tokens W0 U0 G0 R0 K3 *0" in text
    assert "bonuses W0 U0 G1 R0 K0" in text and "bonuses W1 U0 G0 R0 K0" in text
    assert "reserved 1: white 1pt [3G 2R 2K]" in text
    assert "(blind)" in text


def test_render_human_prints(capsys) -> None:
    e = env(render_mode="human")
    e.reset(seed=0)
    capsys.readouterr()
    assert e.render() is None
    out = capsys.readouterr().out
    assert "bank:" in out and "player_1" in out
    e.step(take3(W, U, G))
    assert "player_1 to move" in capsys.readouterr().out, "human mode draws after each step"


def test_render_game_over_and_truncation_lines() -> None:
    e = restored(make_state(2, purchased={0: [73, 77, 81]}, final_round=True, current=1), render_mode="ansi")
    e.step(take3(W, U, G))
    assert "game over: player_0 wins" in e.render()
    e = env(max_turns=1, render_mode="ansi")
    e.reset(seed=0)
    e.step(take3(W, U, G))
    assert "truncated" in e.render()


def test_invalid_render_mode() -> None:
    with pytest.raises(ValueError, match="render_mode"):
        env(render_mode="rgb")


def test_render_without_mode_warns() -> None:
    e = env()
    e.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert e.render() is None


def test_describe_every_id() -> None:
    s = new_state(2, seed=0)
    texts = [describe(a) for a in range(NUM_ACTIONS)]
    assert all(isinstance(t, str) and t for t in texts)
    assert len(set(texts)) == NUM_ACTIONS, "each id has its own text"
    assert all(describe(a, s).startswith(texts[a]) for a in range(NUM_ACTIONS))
    # Ids from 72 on belong to the Cities of Splendor blocks (appended, see test_modules_properties).
    assert describe(72) == "claim city slot 1"
    with pytest.raises(ValueError, match="748"):
        describe(749)


@pytest.mark.parametrize(
    "action,text",
    [
        (take3(W, U, R), "take 1 white, 1 blue, 1 red"),
        (12, "take 1 white, 1 red"),
        (22, "take 1 green"),
        (29, "take 2 black"),
        (reserve_deck(2), "reserve top of L3 deck (blind)"),
        (discard(U), "discard 1 blue"),
        (discard(GOLD), "discard 1 gold"),
        (71, "pass"),
    ],
)
def test_describe_texts(action: int, text: str) -> None:
    assert describe(action) == text


def test_describe_names_the_card() -> None:
    s = make_state(2, market={(1, 2): 60, (0, 0): 15}, reserved={0: [23]}, nobles=[2, 9, 0])
    assert describe(buy_market(1, 2), s) == "buy market card L2 slot 3 (red, 2 pts)"
    assert describe(30, s) == "reserve market card L1 slot 1 (blue, 1 pt)"
    assert describe(buy_reserved(0), s) == "buy reserved card slot 1 (green, 1 pt)"
    assert describe(67, s) == "choose noble slot 2 (3 green 3 red 3 black)"
    e = restored(s)
    assert e.describe_action(buy_market(1, 2)) == "buy market card L2 slot 3 (red, 2 pts)"


# ---------------------------------------------------------------------------
# Snapshots


def _states_along_a_game(n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    s = new_state(n, seed=seed)
    out = [s.copy()]
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    while not rules.is_over(s):
        rules.legal_mask(s, mask)
        rules.apply_action(s, int(rng.choice(np.flatnonzero(mask))))
        out.append(s.copy())
    return out


@pytest.mark.parametrize("n", [2, 3, 4])
def test_snapshot_json_round_trip_exact(n: int) -> None:
    phases = set()
    for s in _states_along_a_game(n, seed=n):
        text = json.dumps(to_dict(s))
        back = from_dict(json.loads(text))
        assert back.dtype == s.dtype and np.array_equal(back, s)
        phases.add(st.PHASE_NAMES[s[st.PHASE]])
    assert "game_over" in phases


def test_round_trip_of_truncated_and_special_phases() -> None:
    s = play(make_state(2, tokens={0: "3W 3U 3G"}, max_turns=1), take3(W, U, G))
    assert st.PHASE_NAMES[s[st.PHASE]] == "discard"
    assert np.array_equal(from_dict(to_dict(s)), s)
    t = play(make_state(2, max_turns=1), take3(W, U, G))
    assert st.PHASE_NAMES[t[st.PHASE]] == "truncated"
    assert np.array_equal(from_dict(to_dict(t)), t)


def test_env_snapshot_restore_continues_identically() -> None:
    e1 = env(num_players=3)
    e1.reset(seed=4)
    for a in (take3(W, U, G), reserve_deck(1), take3(R, K, W)):
        e1.step(a)
    snap = json.loads(json.dumps(e1.snapshot()))
    e2 = env(num_players=3)
    e2.reset(seed=99)
    e2.restore(snap)
    assert e2.agent_selection == e1.agent_selection
    for agent in e1.agents:
        o1, o2 = e1.observe(agent), e2.observe(agent)
        assert np.array_equal(o1["observation"], o2["observation"])
        assert np.array_equal(o1["action_mask"], o2["action_mask"])
    assert np.array_equal(e1.engine_state(), e2.engine_state())


def test_restore_rejects_wrong_player_count() -> None:
    e = env(num_players=2)
    e.reset(seed=0)
    with pytest.raises(ValueError, match="3-player"):
        e.restore(to_dict(new_state(3)))


def test_game_state_is_read_only() -> None:
    e = env()
    e.reset(seed=0)
    with pytest.raises(ValueError):
        e.game_state[st.BANK] = 0


def _corrupt(edit) -> dict:
    d = copy.deepcopy(to_dict(new_state(2, seed=0)))
    edit(d)
    return d


@pytest.mark.parametrize(
    "edit,match",
    [
        (
            lambda d: d["players"][0]["reserved"].append({"card": d["market"][0][0], "blind": False}),
            "two places",
        ),
        (lambda d: d["decks"][0].pop(), "missing"),
        (
            lambda d: d["bank"].update(white=5),
            r'snapshot\["bank"\]\["white"\]: expected an integer in 0..4, got 5',
        ),
        (lambda d: d["players"][1]["tokens"].update(gold=1), "tokens not conserved"),
        (lambda d: d["bank"].update(red=-1), r'\["red"\]: expected an integer in 0..4, got -1'),
        (lambda d: d.update(phase="shopping"), "phase"),
        (lambda d: d.update(current_player=2), "current_player"),
        (lambda d: d.pop("bank"), r'snapshot\["bank"\]: missing'),
        (lambda d: d["players"].pop(), r'snapshot\["players"\]: expected a list of 2 entries, got 1'),
        (lambda d: d["market"][1].pop(), r'snapshot\["market"\]\[1\]: expected a list of 4'),
        (lambda d: d["decks"][0].append(d["decks"][1].pop()), "level"),
        (lambda d: d.update(num_players=5), "num_players"),
        (
            lambda d: d["players"][0].update(purchased=[95]),
            r'\["purchased"\]\[0\]: expected an integer in 0..89, got 95',
        ),
        (lambda d: d["nobles"][0].update(owner=2), r'\["owner"\]: expected an integer in 0..1, got 2'),
        (lambda d: d.update(winners=[2]), r'snapshot\["winners"\]\[0\]: expected an integer in 0..1, got 2'),
        (lambda d: d.update(winners=[0]), "before the game is over"),
        (lambda d: d.update(turn=-1), r'snapshot\["turn"\]: expected an integer in 0..1000, got -1'),
        (
            lambda d: d.update(consecutive_passes=-2),
            r'\["consecutive_passes"\]: expected an integer in 0..2, got -2',
        ),
        (lambda d: d.update(phase="discard"), "discard phase"),
        (lambda d: d.update(phase="noble"), "noble phase"),
        (lambda d: d["nobles"].append({"noble": d["nobles"][0]["noble"], "owner": None}), "noble"),
        (
            lambda d: d["players"][0].update(
                reserved=[{"card": c, "blind": False} for c in d["decks"][0][:4]]
            ),
            "reserved",
        ),
    ],
)
def test_from_dict_rejects_bad_snapshots(edit, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        from_dict(_corrupt(edit))


def test_from_dict_recomputes_derived_fields() -> None:
    """Hand-edited bonuses or prestige cannot contradict the purchased cards."""
    d = to_dict(make_state(2, purchased={0: [73]}))
    d["players"][0]["prestige"] = 99
    d["players"][0]["bonuses"]["red"] = 7
    s = from_dict(d)
    p = to_dict(s)["players"][0]
    assert p["prestige"] == 5 and p["bonuses"] == {"white": 1, "blue": 0, "green": 0, "red": 0, "black": 0}


def test_restore_rejects_inconsistent_array() -> None:
    e = env()
    e.reset(seed=0)
    bad = e.engine_state()
    bad[st.BANK] += 1
    with pytest.raises(ValueError, match=r'state array, read as a snapshot\["bank"\]\["white"\]'):
        e.restore(bad)


# ---------------------------------------------------------------------------
# Determinism


def _trace(n: int, seed: int, action_seed: int, steps: int = 120) -> list[bytes]:
    e = env(num_players=n)
    e.reset(seed=seed)
    rng = np.random.default_rng(action_seed)
    out = []
    for _ in range(steps):
        if not e.agents:
            break
        obs, reward, term, trunc, _ = e.last()
        out.append(e.engine_state().tobytes())
        for agent in e.agents:
            out.append(e.observe(agent)["observation"].tobytes())
        out.append(np.float64(reward).tobytes())
        action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        e.step(action)
    return out


@pytest.mark.parametrize("n", [2, 4])
def test_same_seed_same_actions_same_trajectory(n: int) -> None:
    assert _trace(n, seed=21, action_seed=3) == _trace(n, seed=21, action_seed=3)
    assert _trace(n, seed=21, action_seed=3) != _trace(n, seed=22, action_seed=3)


def test_reset_with_same_seed_deals_same_game_on_a_reused_env() -> None:
    e = env()
    e.reset(seed=8)
    first = e.engine_state()
    e.step(take3(W, U, G))
    e.reset(seed=8)
    assert np.array_equal(e.engine_state(), first)
    e.reset()  # unseeded resets keep dealing new games
    assert not np.array_equal(e.engine_state(), first)
    e2 = env()
    e2.reset(seed=8)
    e2.reset()
    assert np.array_equal(e.engine_state(), e2.engine_state()), "unseeded resets follow the last seed"


# ---------------------------------------------------------------------------
# Rewards, termination and truncation


def _finish(e: raw_env) -> dict[str, float]:
    """Step dead agents out; return each agent's last reward."""
    got = {}
    while e.agents:
        _, reward, term, trunc, _ = e.last()
        assert term or trunc
        got[e.agent_selection] = reward
        e.step(None)
    return got


def test_game_end_rewards_in_env() -> None:
    e = restored(make_state(2, tokens={0: "4G"}, purchased={0: [73, 77, 71]}, market={(0, 0): 7}))
    e.step(buy_market(0, 0))
    assert not any(e.terminations.values()) and e.rewards == {"player_0": 0.0, "player_1": 0.0}
    e.step(take3(W, U, G))
    assert all(e.terminations.values()) and not any(e.truncations.values())
    assert e.rewards == {"player_0": 1.0, "player_1": -1.0}
    assert _finish(e) == {"player_0": 1.0, "player_1": -1.0}


def test_shared_victory_rewards_in_env() -> None:
    s = make_state(3, purchased={0: [73, 77, 75, 23], 1: [81, 85, 71, 31]}, final_round=True, current=2)
    e = restored(s)
    e.step(take3(W, U, G))
    assert e.snapshot()["winners"] == [0, 1]
    assert e.rewards == {"player_0": 0.0, "player_1": 0.0, "player_2": -1.0}


@pytest.mark.parametrize("ctor", CONSTRUCTORS, ids=["env", "raw_env"])
def test_truncation_is_not_termination(ctor) -> None:
    e = ctor(num_players=3, max_turns=4)
    e.reset(seed=0)
    rng = np.random.default_rng(0)
    steps = 0
    while not (any(e.truncations.values()) or any(e.terminations.values())):
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(int(rng.choice(np.flatnonzero(mask))))
        steps += 1
        assert steps < 50
    assert e.snapshot()["turn"] == 4
    assert all(e.truncations.values()) and not any(e.terminations.values())
    assert all(r == 0.0 for r in e.rewards.values())
    assert _finish(e) == {f"player_{i}": 0.0 for i in range(3)}


def test_shaped_rewards_give_prestige_gain() -> None:
    # Card 14 completes noble 0: 0 points of card + 3 of the noble.
    s = make_state(
        2,
        tokens={0: "2G 2R"},
        purchased={0: [0, 1, 2, 3, 8, 9, 10], 1: [7]},
        market={(0, 0): 14},
        nobles=[0, 5],
    )
    shaped = restored(s, reward_mode="shaped", shaping_scale=0.1)
    terminal = restored(s)
    for e in (shaped, terminal):
        e.step(buy_market(0, 0))
    assert shaped.rewards["player_0"] == pytest.approx(0.3) and shaped.rewards["player_1"] == 0.0
    assert terminal.rewards == {"player_0": 0.0, "player_1": 0.0}
    for e in (shaped, terminal):
        e.step(take3(W, U, G))  # no prestige gained: no shaping
        assert e.rewards == {"player_0": 0.0, "player_1": 0.0}


def test_shaped_rewards_add_to_the_terminal_reward() -> None:
    s = make_state(2, tokens={0: "4G"}, purchased={0: [73, 77, 71]}, market={(0, 0): 7}, final_round=False)
    e = restored(s, reward_mode="shaped")  # default scale 0.01
    e.step(buy_market(0, 0))
    assert e.rewards["player_0"] == pytest.approx(0.01)
    e.step(take3(W, U, G))
    assert e.rewards == {"player_0": pytest.approx(1.0), "player_1": pytest.approx(-1.0)}


def test_default_reward_mode_is_terminal() -> None:
    assert env().config.reward_mode == "terminal"
    e = restored(make_state(2, tokens={0: "4G"}, market={(0, 0): 7}))
    e.step(buy_market(0, 0))  # +1 prestige, no reward
    assert e.rewards == {"player_0": 0.0, "player_1": 0.0}


def test_package_exports() -> None:
    assert splendor_env.NUM_ACTIONS == 72
    assert issubclass(IllegalActionError, ValueError)
    assert "take_3_different" in splendor_env.action_table()


@pytest.mark.parametrize("bad", ["4", 4.0, True, None])
def test_from_dict_rejects_non_integer_fields(bad: object) -> None:
    """A snapshot field that should be an integer must be one: no silent int() of strings or floats."""
    d = to_dict(new_state(2, seed=0))
    d["bank"]["red"] = bad
    with pytest.raises(ValueError, match="expected an integer"):
        from_dict(d)
