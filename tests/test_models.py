"""The shipped models are package data addressed by name (agents/nets/shipped.py), and work from a wheel.

Why: the models used to live in a top-level ``models/`` folder that three
modules found relative to the checkout in three ways, so an installed wheel
had no model at all. Now one registry resolves names and picks the model for
a game; the slow test builds the wheel and
plays from it outside the repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from agents.nets.shipped import (
    RETIRED,
    default_model,
    resolve_model,
    shipped_dir,
    shipped_models,
    shipped_names,
)
from splendor_env.actions import NUM_ACTIONS, NUM_ACTIONS_ALL
from splendor_env.observation import OBS_DIM, OBS_DIM_ALL

ROOT = Path(__file__).resolve().parents[1]
NAMES = [
    "az_2p",
    "az_2p_v5",
    "az_3_4p",
    "az_3_4p_v2",
    "az_modules_2p",
    "az_modules_2p_v2",
    "ppo_2p",
    "ppo_base_3_4p",
    "ppo_modules_2p",
]
ALL = ("cities", "trading_posts", "orient", "strongholds")


def test_the_three_shipped_models_are_listed_with_their_files() -> None:
    assert shipped_names() == NAMES
    models = shipped_models()
    assert sorted(models) == NAMES
    for name, meta in models.items():
        assert meta["name"] == name and meta["model"] == f"{name}.zip"
        assert Path(meta["path"]) == shipped_dir() / f"{name}.zip" and Path(meta["path"]).is_file()
        assert (shipped_dir() / f"{name}.json").is_file()
    assert (shipped_dir() / "README.md").is_file()
    assert not (ROOT / "models" / "ppo_2p.zip").exists()  # one place only: the package


@pytest.mark.parametrize("name", NAMES)
def test_metadata_is_uniform(name: str) -> None:
    meta = shipped_models()[name]
    assert set(meta["game"]) == {"players", "modules"}
    modules = meta["game"]["modules"]
    assert meta["observation_size"] == (OBS_DIM_ALL if modules else OBS_DIM)
    assert meta["num_actions"] == (NUM_ACTIONS_ALL if modules else NUM_ACTIONS)
    assert meta["command"].startswith(
        (
            "python -m training.train --config configs/",
            "python -m training.search_train --config configs/",
            "python -m training.critic_fit --config configs/",
        )
    )
    assert (
        meta["evaluation_command"].startswith("python -m training.evaluate ")
        and name in meta["evaluation_command"]
    )
    assert meta["evaluation"] and all(0.0 <= e["win_rate"] <= 1.0 for e in meta["evaluation"])
    assert isinstance(meta["description"], str) and meta["description"]
    players = meta["config"].get("players", meta["config"].get("stage2", {}).get("players"))
    assert sorted([players] if isinstance(players, int) else players) == meta["game"]["players"]


def test_metadata_is_a_copy() -> None:
    shipped_models()["ppo_2p"]["game"]["players"].append(9)
    assert shipped_models()["ppo_2p"]["game"]["players"] == [2]


@pytest.mark.parametrize("name", NAMES)
def test_metadata_matches_the_loaded_model(name: str) -> None:
    pytest.importorskip("sb3_contrib")
    from agents.nets.checkpoint import game_of, load_model

    meta = shipped_models()[name]
    model = load_model(name)
    assert model.observation_space.shape == (meta["observation_size"],)
    assert int(model.action_space.n) == meta["num_actions"]
    game = game_of(model, name)
    assert {"players": game["players"], "modules": game["modules"]} == meta["game"]


@pytest.mark.parametrize(
    ("players", "modules", "name"),
    [
        (2, (), "az_2p_v5"),
        (3, (), "az_3_4p_v2"),
        (4, (), "az_3_4p_v2"),
        (2, ALL, "az_modules_2p_v2"),
        (2, ("strongholds", "orient", "cities", "trading_posts"), "az_modules_2p_v2"),  # order is not a game
        (3, ALL, None),
        (2, ("cities",), None),
        (2, ("cities", "trading_posts", "orient"), None),
        (5, (), None),
    ],
)
def test_default_model_per_game(players: int, modules: tuple[str, ...], name: str | None) -> None:
    assert default_model(players, modules) == name
    assert default_model(players, list(modules)) == name


def test_every_game_a_shipped_model_covers_has_exactly_one_marked_default() -> None:
    """A new network never becomes az's default by its name alone: each game's default is marked."""
    games: dict[tuple[int, frozenset[str]], list[str]] = {}
    for name, meta in shipped_models().items():
        for n in meta["game"]["players"]:
            games.setdefault((n, frozenset(meta["game"]["modules"])), []).append(name)
    for (n, modules), names in games.items():
        marked = [name for name in names if shipped_models()[name].get("default")]
        assert len(marked) == 1, (n, sorted(modules), names)
        assert default_model(n, tuple(modules)) == marked[0]


@pytest.mark.slow
def test_default_model_plays_the_game_it_is_picked_for() -> None:
    pytest.importorskip("sb3_contrib")
    from agents.players.ppo import PPOAgent

    for players, modules in ((2, ()), (3, ()), (4, ()), (2, ALL)):
        name = default_model(players, modules)
        assert name is not None
        PPOAgent(name).check_game(players, modules)  # raises if the model does not play that game


@pytest.mark.parametrize("given", ["ppo_2p", "ppo_2p.zip"])
def test_names_resolve_to_the_shipped_file(
    given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no model file here, as in an installed copy
    assert resolve_model(given) == shipped_dir() / "ppo_2p.zip"


def test_an_existing_file_wins_over_a_shipped_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    own = tmp_path / "models" / "ppo_2p.zip"
    own.parent.mkdir()
    own.write_bytes(b"mine")
    assert resolve_model("models/ppo_2p.zip") == Path("models/ppo_2p.zip")
    assert resolve_model("models/ppo_2p") == Path("models/ppo_2p.zip")  # the .zip may be left off
    assert resolve_model(own) == own


@pytest.mark.parametrize(
    "given", ["nope", "nope.zip", "other/ppo_2p.zip", "models/ppo_2p.zip", "models/nope.zip", "", "models"]
)
def test_an_unknown_name_is_a_clear_error(
    given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()  # a folder is not a model
    with pytest.raises(
        FileNotFoundError,
        match=rf"shipped models: {', '.join(NAMES)}$",
    ):
        resolve_model(given)


@pytest.mark.parametrize("given", ["az_2p_v3", "az_2p_v3.zip"])
def test_a_retired_name_says_which_commit_has_it(
    given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A network retired from the package (0.6.0) is an error naming its sha256 and the commit that
    shipped it; the file that commit gives back, left in the working folder, is what the name then names."""
    monkeypatch.chdir(tmp_path)
    sha, commit = RETIRED["az_2p_v3"]
    with pytest.raises(
        FileNotFoundError,
        match=rf"retired .* {sha[:16]}.*git show {commit}:agents/shipped/az_2p_v3.zip > az_2p_v3.zip",
    ):
        resolve_model(given)
    (tmp_path / "az_2p_v3.zip").write_bytes(b"fetched")
    assert resolve_model(given) == Path("az_2p_v3.zip")


def test_the_retired_networks_are_gone_from_the_package_and_listed() -> None:
    readme = (shipped_dir() / "README.md").read_text(encoding="utf-8")
    policies = (ROOT / "docs" / "results" / "policies.md").read_text(encoding="utf-8")
    for name, (sha, commit) in RETIRED.items():
        assert name not in shipped_names() and not (shipped_dir() / f"{name}.zip").exists()
        for text in (readme, policies):
            assert f"| `{name}` | `{sha}` | `{commit}` |" in text, name


@pytest.mark.parametrize("name", sorted(RETIRED))
def test_a_retired_networks_commit_holds_it_byte_for_byte(name: str) -> None:
    """The commit the error names gives the file back with the sha256 it names (needs the history)."""
    import hashlib

    sha, commit = RETIRED[name]
    done = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{commit}:agents/shipped/{name}.zip"],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"commit {commit} is not in this checkout (a shallow clone?)")
    assert hashlib.sha256(done.stdout).hexdigest() == sha


def _one_move(agent, num_players: int = 2, modules: tuple[str, ...] = ()) -> None:
    import splendor_env

    env = splendor_env.env(num_players=num_players, modules=modules)
    env.reset(seed=5)
    obs = env.observe(env.agent_selection)
    move = agent.act(obs["observation"], obs["action_mask"])
    assert obs["action_mask"][move]


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["ppo:ppo_2p", "ppo:ppo_2p.zip"])
def test_ppo_spec_by_name_from_any_folder(spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sb3_contrib")
    import agents

    monkeypatch.chdir(tmp_path)
    agent = agents.make(spec, seed=0)
    assert agent.game["players"] == [2] and agent.game["modules"] == []
    _one_move(agent)


def test_ppo_spec_for_a_module_model_by_name() -> None:
    pytest.importorskip("sb3_contrib")
    import agents

    _one_move(agents.make("ppo:ppo_modules_2p", seed=0), 2, ALL)


def test_an_unknown_ppo_spec_names_the_shipped_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("sb3_contrib")
    import agents

    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        FileNotFoundError,
        match=rf"'nope'.*{', '.join(NAMES)}",
    ):
        agents.make("ppo:nope")


def test_a_checkpoint_spec_resolves_shipped_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sb3_contrib")
    from agents.registry import checkpoint_of

    monkeypatch.chdir(tmp_path)
    shipped_file = str(shipped_dir() / "ppo_2p.zip")
    for spec in ("ppo_2p", "ppo:ppo_2p", "ppo_2p.zip"):
        assert checkpoint_of(spec) == shipped_file
    assert checkpoint_of("greedy") is None and checkpoint_of("mcts:sims=10") is None
    assert checkpoint_of("nope.zip") == "nope.zip"  # a missing file: the file check reports it
    assert checkpoint_of("ppo:nope") == "nope"
    assert checkpoint_of("az:nope.zip") is None and checkpoint_of("az:run/best.zip") is None  # agent specs


def test_value_report_resolves_shipped_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sb3_contrib")
    from training.matches.value_report import shipped

    monkeypatch.chdir(tmp_path)
    shipped_file = str(shipped_dir() / "ppo_2p.zip")
    assert shipped(shipped_file) == shipped("ppo_2p") == shipped_file
    assert shipped("missing.zip") == "missing.zip"


# ---------------------------------------------------------------------------
# From an installed wheel, outside the repository

#: What a wheel needs from the checkout (the rest: tests, configs, runs, .venv, is not packaged).
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "splendor_env", "agents", "training")

#: Run in the wheel's install: it must import the installed copy, not the checkout, then play.
WHEEL_SCRIPT = r"""
import sys
from pathlib import Path

site = Path(sys.argv[1]).resolve()
import agents, splendor_env, training
for module in (agents, splendor_env, training):
    assert Path(module.__file__).resolve().is_relative_to(site), (module.__name__, module.__file__)
from agents.nets.shipped import default_model, resolve_model, shipped_models

assert sorted(shipped_models()) == ["az_2p", "az_2p_v5", "az_3_4p", "az_3_4p_v2", "az_modules_2p", "az_modules_2p_v2", "ppo_2p", "ppo_base_3_4p", "ppo_modules_2p"], shipped_models()
assert resolve_model("ppo_2p").resolve().is_relative_to(site)
assert default_model(2, ()) == "az_2p_v5"
import numpy as np
from agents.runner import decision_state

for spec in sys.argv[2:]:
    agent = agents.make(spec, seed=0)
    env = splendor_env.env(num_players=2)
    env.reset(seed=5)
    obs = env.observe(env.agent_selection)
    state = decision_state(agent, env.game_state, 0, np.random.default_rng(0))
    move = agent.act(obs["observation"], obs["action_mask"], state=state)
    assert obs["action_mask"][move], spec
    print("played", spec, int(move))
"""


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Build the wheel from a copy of the sources and install it (no deps) into a bare folder."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc", "*.egg-info", "build")
    for name in WHEEL_SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        elif path.is_file():
            shutil.copy2(path, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    subprocess.run(
        [
            *pip,
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(base / "dist"),
            str(src),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = (base / "dist").glob("splendor_env-*.whl")
    site = base / "site"
    subprocess.run(
        [*pip, "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
        text=True,
    )
    run = base / "run"  # the cwd: outside the checkout, with no models/ folder
    run.mkdir()
    return {"wheel": wheel, "site": site, "run": run, "numba": base / "numba"}


def _in_wheel(installed: dict[str, Path], *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(
        PYTHONPATH=str(installed["site"]), NUMBA_CACHE_DIR=str(installed["numba"]), PYTHONNOUSERSITE="1"
    )
    return subprocess.run(
        [sys.executable, *args], cwd=installed["run"], env=env, capture_output=True, text=True, timeout=900
    )


@pytest.mark.slow
def test_the_wheel_holds_the_models(installed_wheel: dict[str, Path]) -> None:
    with zipfile.ZipFile(installed_wheel["wheel"]) as whl:
        names = set(whl.namelist())
    for name in NAMES:
        assert {f"agents/shipped/{name}.zip", f"agents/shipped/{name}.json"} <= names
    assert {"agents/shipped/README.md", "agents/nets/shipped.py"} <= names
    assert not any(n.startswith(("models/", "tests/", "configs/")) for n in names)
    meta = json.loads((installed_wheel["site"] / "agents" / "shipped" / "ppo_2p.json").read_text())
    assert meta["game"] == {"players": [2], "modules": []}


@pytest.mark.slow
def test_ppo_plays_from_the_wheel_outside_the_repository(installed_wheel: dict[str, Path]) -> None:
    pytest.importorskip("sb3_contrib")
    specs = ("ppo:ppo_2p", "ppo:ppo_2p.zip")
    done = _in_wheel(installed_wheel, "-c", WHEEL_SCRIPT, str(installed_wheel["site"]), *specs)
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(f"played {spec} " in done.stdout for spec in specs), done.stdout


@pytest.mark.slow
def test_play_runs_from_the_wheel(installed_wheel: dict[str, Path]) -> None:
    pytest.importorskip("sb3_contrib")
    done = _in_wheel(installed_wheel, "-m", "training.play", "--help")
    assert done.returncode == 0 and "--agents" in done.stdout, done.stdout + done.stderr
    # The default game (the shipped policy against greedy), cut short.
    done = _in_wheel(installed_wheel, "-m", "training.play", "--render", "none", "--max-turns", "3")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_az_default_model_from_the_wheel(installed_wheel: dict[str, Path]) -> None:
    """``agents.make("az")`` (no path: the shipped ppo_2p) works from an installed wheel."""
    pytest.importorskip("sb3_contrib")
    done = _in_wheel(installed_wheel, "-c", WHEEL_SCRIPT, str(installed_wheel["site"]), "az:sims=8")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", NAMES)
def test_search_options_a_shipped_model_records_are_ones_az_accepts(name: str) -> None:
    from agents.nets.shipped import search_options
    from agents.players.az import network_options

    options = search_options(name)
    assert network_options(name) == options  # known keys, valid values, as recorded
    assert search_options(shipped_dir() / f"{name}.zip") == options  # by its path in the folder too
    assert search_options(ROOT / "README.md") == {} and search_options("nope.zip") == {}


def test_a_file_of_ones_own_named_like_a_shipped_model_has_no_search_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.nets import shipped as models

    recorded = shipped_models()
    recorded["az_3_4p"]["az"] = {"ptemp": 1.5}
    monkeypatch.setattr(models, "_load_all", lambda: recorded)
    assert models.search_options("az_3_4p") == {"ptemp": 1.5}
    assert models.search_options("models/az_3_4p.zip") == {}  # not a shipped name: no such file
    monkeypatch.chdir(tmp_path)
    shutil.copy(shipped_dir() / "az_3_4p.zip", tmp_path / "az_3_4p.zip")  # now the name is this file
    assert resolve_model("az_3_4p") == Path("az_3_4p.zip") and models.search_options("az_3_4p") == {}
