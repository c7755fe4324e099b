"""Issue 13, public boundaries: SplendorBatch, env/raw_env, agents and the play/records CLIs refuse bad
arguments with one line naming the argument, and leave the game untouched."""

from __future__ import annotations

import json
import warnings
import zipfile

import numpy as np
import pytest

import agents
import splendor_env
from splendor_env import records
from splendor_env.vector import MAX_SEED, SplendorBatch
from training import play
from training.common.cli import run_cli
from training.records import main as records_main

# -- SplendorBatch -----------------------------------------------------------------------------


@pytest.fixture
def venv() -> SplendorBatch:
    v = SplendorBatch(4, num_players=2)
    v.reset(seed=0)
    return v


@pytest.mark.parametrize(
    "env_ids,error,match",
    [
        ([False, True], TypeError, "integer game indices, got dtype bool"),
        ([1.9], TypeError, "got dtype float64"),
        (["1"], TypeError, "integer game indices"),
        (1, ValueError, "1-D sequence"),
        ([[0, 1]], ValueError, "1-D sequence"),
        ([4], ValueError, r"0..3, got \[4\]"),
        ([-1], ValueError, r"0..3"),
        ([0, 0], ValueError, "distinct"),
    ],
)
def test_vector_env_ids_refused_and_games_untouched(venv: SplendorBatch, env_ids, error, match: str) -> None:
    before = venv.states.copy()
    acts = np.zeros(np.shape(env_ids), dtype=np.int64)
    with pytest.raises(error, match=match):
        venv.step(acts, env_ids=env_ids)
    assert np.array_equal(venv.states, before)


def test_vector_env_ids_integers_step_exactly_those_games(venv: SplendorBatch) -> None:
    before = venv.states.copy()
    mask = venv.action_masks()
    a = int(np.flatnonzero(mask[1])[0])
    venv.step(np.array([a]), env_ids=np.array([1], dtype=np.int32))
    changed = [b for b in range(4) if not np.array_equal(before[b], venv.states[b])]
    assert changed == [1]


def test_vector_observe_checks() -> None:
    v = SplendorBatch(2)
    with pytest.raises(RuntimeError, match="before reset"):
        v.observe(0)
    v.reset(seed=1)
    with pytest.raises(TypeError, match="seat must be an int"):
        v.observe(1.5)
    with pytest.raises(TypeError, match="seat must be an int"):
        v.observe(True)
    with pytest.raises(ValueError, match="seat must be in 0..1"):
        v.observe(2)
    assert v.observe(1).shape == (2, splendor_env.OBS_DIM)


@pytest.mark.parametrize(
    "seed,error", [(2**63 - 2, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError)]
)
def test_vector_reset_seed_range(seed, error) -> None:
    with pytest.raises(error, match="seed"):
        SplendorBatch(2).reset(seed=seed)
    with pytest.raises(error, match="seed"):
        SplendorBatch(2, seed=seed)


def test_vector_auto_reset_seeds_stay_replayable_at_the_largest_seed() -> None:
    v = SplendorBatch(3, max_turns=4)
    v.reset(seed=MAX_SEED)
    rng = np.random.default_rng(0)
    for _ in range(12):  # every game is truncated after 4 turns and dealt again
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in v.action_masks()])
        v.step(actions)
    nxt = v.next_seed
    assert MAX_SEED + 3 < nxt < 2**63
    e = splendor_env.env(max_turns=4)
    e.reset(seed=nxt - 1)  # the last game dealt can be replayed in the AEC env
    assert e.engine_state()[splendor_env.state.MAX_TURNS] == 4


def test_vector_render_mode_message() -> None:
    with pytest.raises(ValueError, match="SplendorBatch does not render"):
        SplendorBatch(2, render_mode="ansi")


def test_vector_final_observation_is_a_fresh_copy() -> None:
    v = SplendorBatch(2, max_turns=2)
    v.reset(seed=0)
    infos = []
    for _ in range(4):
        *_, info = v.step(np.array([np.flatnonzero(m)[0] for m in v.action_masks()]))
        infos.append(info)
    assert not np.shares_memory(infos[0]["final_observation"], infos[-1]["final_observation"])
    assert not np.shares_memory(infos[0]["final_state"], v._final_states)


# -- env / raw_env -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options,error,match",
    [
        ({"max_turns": 2**31}, ValueError, "max_turns must be in 1..2147483647"),
        ({"max_turns": 2**32}, ValueError, "max_turns"),
        ({"max_turns": 0}, ValueError, "max_turns"),
        ({"shaping_scale": float("nan")}, ValueError, "shaping_scale must be a finite"),
        ({"shaping_scale": float("inf")}, ValueError, "shaping_scale must be a finite"),
        ({"shaping_scale": -0.5}, ValueError, r"shaping_scale must be in 0.0..1.0"),
        ({"illegal_reward": float("nan")}, ValueError, "illegal_reward must be a finite"),
        ({"illegal_reward": 2.0}, ValueError, "illegal_reward is a penalty"),
    ],
)
def test_env_options_refused(options, error, match: str) -> None:
    with pytest.raises(error, match=match):
        splendor_env.raw_env(**options)
    with pytest.raises(error, match=match):
        SplendorBatch(2, **options)


@pytest.mark.parametrize("method", ["last", "snapshot", "state"])
def test_env_before_reset_is_a_clear_error(method: str) -> None:
    with pytest.raises(RuntimeError, match=rf"{method}\(\) called before reset"):
        getattr(splendor_env.env(), method)()


def test_env_after_every_agent_removed() -> None:
    e = splendor_env.env(max_turns=2)
    e.reset(seed=0)
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert e.agents == []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        e.step(None)  # PettingZoo's documented behaviour: a warning, nothing happens
    assert any("after every agent was removed" in str(w.message) for w in caught)
    with pytest.raises(RuntimeError, match="after every agent was removed"):
        e.last()
    with pytest.raises(ValueError, match="unknown agent 'player_9'"):
        e.observe("player_9")


# -- agents --------------------------------------------------------------------------------


def test_greedy_mask_of_the_wrong_length() -> None:
    with pytest.raises(ValueError, match=r"action_mask must have shape \(72,\), got \(10,\)"):
        agents.make("greedy").act(np.zeros(splendor_env.OBS_DIM, dtype=np.float32), np.ones(10))


@pytest.mark.parametrize("spec", ["random", "greedy", "mcts"])
def test_agent_seed_named(spec: str) -> None:
    with pytest.raises(ValueError, match="agent seed must be None or an int >= 0, got -1"):
        agents.make(spec, seed=-1)


def _bad_zips(tmp_path):
    corrupt = tmp_path / "corrupt.zip"
    corrupt.write_bytes(b"this is not a zip")
    empty = tmp_path / "empty.zip"
    empty.write_bytes(b"")
    nomodel = tmp_path / "nomodel.zip"
    with zipfile.ZipFile(nomodel, "w") as z:
        z.writestr("readme.txt", "no model here")
    return [corrupt, empty, nomodel]


def test_ppo_unreadable_zips_refused(tmp_path) -> None:
    pytest.importorskip("sb3_contrib")
    for path in _bad_zips(tmp_path):
        with pytest.raises(ValueError, match="is not a readable MaskablePPO .zip"):
            agents.make(f"ppo:{path}")


def test_ppo_model_for_other_sizes_refused_at_load(tmp_path) -> None:
    pytest.importorskip("sb3_contrib")
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    class Tiny(gym.Env):
        observation_space = gym.spaces.Box(0.0, 1.0, (10,), np.float32)
        action_space = gym.spaces.Discrete(5)

    model = MaskablePPO("MlpPolicy", Tiny(), n_steps=8, batch_size=8, policy_kwargs={"net_arch": [4]})
    model.save(tmp_path / "other.zip")
    with pytest.raises(ValueError, match=r"expects observations of shape \(10,\) and 5 actions"):
        agents.make(f"ppo:{tmp_path / 'other.zip'}")


# -- CLIs ----------------------------------------------------------------------------------


def _cli(main, argv, capsys) -> tuple[int, str]:
    try:
        code = run_cli(main, argv, prog="prog")
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,match",
    [
        (["--games", "-1"], "--games must be >= 1, got -1"),
        (["--games", "0"], "--games must be >= 1, got 0"),
        (["--seed", "-5"], r"--seed must be in 0..2\*\*62, got -5"),
        (["--agents", "grredy", "random"], "unknown agent spec 'grredy'"),
        (["--agents", "random"], "--agents needs 2 to 4 specs"),
        (["--agents", "random", "random:x=1"], "takes no options"),
    ],
)
def test_play_cli_refuses_with_one_line(argv, match: str, capsys) -> None:
    code, err = _cli(play.main, argv + ["--render", "none", "--quiet"], capsys)
    assert code == 2
    assert "Traceback" not in err
    assert __import__("re").search(match, err.splitlines()[-1]), err


def _record_file(tmp_path) -> str:
    e = splendor_env.raw_env(max_turns=6)
    e.reset(seed=3)
    actions = []
    while not (e.terminations[e.agent_selection] or e.truncations[e.agent_selection]):
        a = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])
        e.step(a)
        actions.append(a)
    rec = {
        "num_players": 2,
        "seed": 3,
        "max_turns": 6,
        "actions": actions,
        **records.game_result(e.game_state),
    }
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    return str(path)


def test_records_cli_fuzz(tmp_path, capsys) -> None:
    """Random argument lists: exit 0, 1 (a mismatch) or 2, one error line, never a traceback."""
    good = _record_file(tmp_path)
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(bytes(range(256)))
    bad_records = tmp_path / "bad.jsonl"
    bad_records.write_text('{"num_players": 7, "seed": 0, "actions": []}\n[1, 2]\n{"seed": -1}\n')
    pieces = [
        ["replay", good],
        ["replay", str(binary)],
        ["replay", str(bad_records)],
        ["replay", str(tmp_path / "missing.jsonl")],
        ["replay", str(tmp_path)],
        ["--index", "-3"],
        ["--index", "99"],
        ["--index", "0"],
        ["--index", "x"],
        ["--render"],
        ["bogus"],
        [],
    ]
    rng = np.random.default_rng(0)
    for _ in range(60):
        argv = [a for i in rng.choice(len(pieces), size=rng.integers(1, 4)) for a in pieces[i]]
        code, err = _cli(records_main, argv, capsys)
        assert code in (0, 1, 2), (argv, code)
        assert "Traceback" not in err, (argv, err)
        if code == 2:
            assert err.count("\n") >= 1, argv


def test_play_cli_fuzz(capsys) -> None:
    pieces = [
        ["--agents", "random", "random"],
        ["--agents", "grredy", "random"],
        ["--games", "-1"],
        ["--games", "1"],
        ["--seed", "-5"],
        ["--seed", "12"],
        ["--seed", str(2**70)],
        ["--render", "bogus"],
        ["--games", "zero"],
    ]
    rng = np.random.default_rng(1)
    for _ in range(25):
        argv = [a for i in rng.choice(len(pieces), size=rng.integers(1, 4)) for a in pieces[i]]
        if "--agents" not in argv:
            argv += ["--agents", "random", "greedy"]
        code, err = _cli(play.main, argv + ["--render", "none", "--quiet"], capsys)
        assert code in (0, 2), (argv, code)
        assert "Traceback" not in err, (argv, err)
