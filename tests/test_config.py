"""Training configs: every bad key or value is refused before training, naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

pytest.importorskip("yaml")

from training.ppo import config as C  # noqa: E402

#: The MaskablePPO configs (search_*.yaml: tests/test_search_train.py; critic_fit_*.yaml: tests/test_critic_fit.py).
CONFIGS = sorted(
    p
    for p in Path(__file__).resolve().parents[1].joinpath("configs").glob("*.yaml")
    if not p.name.startswith(("search_", "rllib_", "critic_fit_"))  # these have their own loaders
)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_shipped_configs_are_valid(path: Path) -> None:
    raw = yaml.safe_load(path.read_text())
    init = raw.get("init_from")
    if init and init.startswith("runs/"):  # a later stage: it starts from what an earlier config writes
        earlier = [p for p in CONFIGS if init.startswith(yaml.safe_load(p.read_text())["output_dir"] + "/")]
        assert len(earlier) == 1, f"{path.name}: no shipped config writes {init}"
        assert yaml.safe_load(earlier[0].read_text())["network"] == raw["network"], (
            "init_from needs the same network"
        )
        cfg = C.load(path, ["init_from=null"])  # the file exists only once the earlier stage has run
    else:
        cfg = C.load(path)
    assert cfg.player_counts and set(cfg.player_counts) <= {2, 3, 4}


def test_players_may_be_a_list_and_modules_any_combination() -> None:
    random_only = {"eval": {"opponents": ["random"], "best_opponent": None}}  # agents that play module games
    cfg = C.from_dict({"players": [4, 3], "modules": ["orient", "cities"], **random_only})
    assert cfg.players == [4, 3] and cfg.player_counts == [3, 4]
    assert cfg.modules == ["orient", "cities"]
    assert C.from_dict({"players": "3"}).player_counts == [3]
    assert C.from_dict({}, ["players=[2, 4]"]).player_counts == [2, 4]
    every = ["cities", "trading_posts", "orient", "strongholds"]
    assert C.from_dict({"modules": every, **random_only}).modules == every


def test_defaults_and_yaml_floats() -> None:
    cfg = C.from_dict({"ppo": {"learning_rate": "3e-4"}, "total_timesteps": "1e6"})
    assert cfg.ppo.learning_rate == 3e-4 and isinstance(cfg.ppo.learning_rate, float)
    assert cfg.total_timesteps == 1_000_000 and isinstance(cfg.total_timesteps, int)
    assert cfg.modules == [] and cfg.network.net_arch == [128, 128]


def test_overrides_are_typed_by_field() -> None:
    cfg = C.from_dict(
        {"opponents": {"pool": [{"spec": "random"}, {"spec": "greedy"}]}},
        [
            "ppo.learning_rate=3e-4",
            "n_envs=64",
            "network.net_arch=[32, 32]",
            "opponents.pool.1.weight=2",
            "ppo.target_kl=null",
            "network.scale_obs=false",
        ],
    )
    assert cfg.ppo.learning_rate == 3e-4 and cfg.n_envs == 64 and cfg.network.net_arch == [32, 32]
    assert (
        cfg.opponents.pool[1].weight == 2.0 and cfg.ppo.target_kl is None and cfg.network.scale_obs is False
    )


@pytest.mark.parametrize(
    ("raw", "overrides", "match"),
    [
        ({"learning_rate": 1e-3}, [], r"learning_rate: unknown key 'learning_rate'"),
        ({"ppo": {"lr": 1e-3}}, [], r"ppo\.lr: unknown key 'lr'.*learning_rate"),
        ({"n_envs": "many"}, [], r"n_envs: expected an integer, got 'many'"),
        ({"n_envs": 2.5}, [], r"n_envs: expected an integer"),
        ({"n_envs": True}, [], r"n_envs: expected an integer"),
        ({"n_envs": "x"}, [], r"^n_envs: expected an integer, got 'x'$"),
        ({"ppo": {"batch_size": "x"}}, [], r"^ppo\.batch_size: expected an integer, got 'x'$"),
        ({"ppo": {"clip_range": ".nan"}}, [], r"ppo\.clip_range: expected a finite number"),
        ({"ppo": {"target_kl": "x"}}, [], r"^ppo\.target_kl: expected a finite number, got 'x'$"),
        ({"ppo": 3}, [], r"^ppo: expected a mapping, got 3$"),
        ({"output_dir": 5}, [], r"^output_dir: expected a string, got 5$"),
        ({"pretrain": {"samples": 10**7}}, [], r"pretrain\.samples: must be <= 4000000"),
        (
            {"n_envs": 4096, "ppo": {"n_steps": 512}},
            [],
            r"ppo\.n_steps: n_steps \* n_envs must be <= 1,048,576",
        ),
        ({"n_envs": 0}, [], r"n_envs: must be >= 1, got 0"),
        ({"n_envs": 10**6}, [], r"n_envs: must be <= 4096, got 1000000"),
        ({"players": 5}, [], r"^players: a player count must be 2, 3 or 4, got 5$"),
        ({"players": [3, 5]}, [], r"^players: a player count must be 2, 3 or 4, got 5$"),
        ({"players": []}, [], r"^players: must not be empty"),
        ({"players": [3, 3]}, [], r"^players: a player count is listed twice: \[3, 3\]$"),
        ({"players": "x"}, [], r"^players: expected an integer, got 'x'$"),
        ({"players": [2, 3, 4], "n_envs": 2}, [], r"^n_envs: must be >= the number of player counts \(3\)"),
        (
            {"modules": ["town"]},
            [],
            r"^modules\[0\]: unknown module 'town'; known modules: cities, trading_posts",
        ),
        ({"modules": ["orient", "orient"]}, [], r"^modules\[1\]: module 'orient' is listed twice$"),
        ({"modules": "cities"}, [], r"modules: expected a list"),
        (
            {"ppo": {"learning_rate": "fast"}},
            [],
            r"ppo\.learning_rate: expected a finite number, got \'fast\'",
        ),
        ({"ppo": {"learning_rate": -1}}, [], r"ppo\.learning_rate: must be > 0"),
        ({"ppo": {"gamma": 1.5}}, [], r"ppo\.gamma: must be <= 1, got 1\.5"),
        (
            {"n_envs": 4, "ppo": {"n_steps": 8, "batch_size": 64}},
            [],
            r"ppo\.batch_size: must be in 2\.\.n_steps\*n_envs = 32",
        ),
        ({"network": {"activation": "sigmoid"}}, [], r"network\.activation: must be one of"),
        ({"network": {"net_arch": []}}, [], r"network\.net_arch: must not be empty"),
        ({"network": {"net_arch": [64, 0]}}, [], r"network\.net_arch\[1\]: must be >= 1, got 0"),
        ({"network": {"scale_obs": "yes"}}, [], r"network\.scale_obs: expected true/false"),
        ({"network": {"policy": "transformer"}}, [], r"network\.policy: must be one of"),
        (
            {"network": {"policy": "card_slots", "card_features": False}},
            [],
            r"network\.policy: 'card_slots' reads the card features",
        ),
        ({"init_from": "nowhere.zip"}, [], r"init_from: model file not found: 'nowhere\.zip'"),
        (
            {"env": {"reward_mode": "dense"}},
            [],
            r"env\.reward_mode: must be one of 'terminal' or 'shaped', got 'dense'",
        ),
        (
            {"opponents": {"pool": [{"spec": "alphazero"}]}},
            [],
            r"opponents\.pool\[0\]\.spec: unknown or unusable agent spec 'alphazero'",
        ),
        (
            {"opponents": {"pool": [{"weight": 1}]}},
            [],
            r"opponents\.pool\[0\]\.spec: required key is missing",
        ),
        (
            {"opponents": {"pool": [{"spec": "random", "weight": -1}]}},
            [],
            r"opponents\.pool\[0\]\.weight: must be >= 0",
        ),
        (
            {"opponents": {"pool": [{"spec": "random", "weight": 0}]}},
            [],
            r"opponents\.pool: weights must not all be zero",
        ),
        (
            {"opponents": {"pool": [{"spec": "ppo:missing.zip"}]}},
            [],
            r"opponents\.pool\[0\]\.spec: .*missing\.zip",
        ),
        ({"opponents": {"pool": []}}, [], r"opponents\.pool: must not be empty"),
        ({"opponents": {"max_snapshots": 0}}, [], r"opponents\.max_snapshots: must be >= 1"),
        (
            {"eval": {"opponents": ["random", "gready"]}},
            [],
            r"eval\.opponents\[1\]: unknown or unusable agent spec 'gready'",
        ),
        ({"eval": {"opponents": ["snapshots"]}}, [], r"eval\.opponents\[0\]: 'snapshots' is only meaningful"),
        ({"eval": {"games": 0}}, [], r"eval\.games: must be >= 1"),
        ({"eval": {"best_opponent": "mcts"}}, [], r"eval\.best_opponent: must be one of"),
        (
            {"pretrain": {"teacher": "oracle"}},
            [],
            r"pretrain\.teacher: unknown or unusable agent spec 'oracle'",
        ),
        ({"pretrain": {"teacher": "greedy", "samples": 0}}, [], r"pretrain\.samples: must be >= 1, got 0"),
        ({}, ["ppo.learning_rate=abc"], r"ppo\.learning_rate: expected a finite number, got 'abc'"),
        ({}, ["ppo.lr=1e-3"], r"ppo\.lr: unknown key 'lr'"),
        ({}, ["n_envs"], r"expected KEY=VALUE"),
        ({}, ["n_envs=[1"], r"--set n_envs: cannot parse value"),
        ({}, ["opponents.pool.5.weight=1"], r"opponents\.pool has no item '5'"),
        ({}, ["seed.x=1"], r"seed is not a mapping or list"),
    ],
)
def test_bad_configs_name_the_key(raw, overrides, match) -> None:
    with pytest.raises(C.ConfigError, match=match):
        C.from_dict(raw, overrides)


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(C.ConfigError, match="config file not found"):
        C.load(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("n_envs: [1\n")
    with pytest.raises(C.ConfigError, match="not valid YAML"):
        C.load(bad)
    bad.write_text("- 1\n- 2\n")
    with pytest.raises(C.ConfigError, match="top level must be a mapping"):
        C.load(bad)


def test_a_config_starts_from_its_base(tmp_path: Path) -> None:
    """``base:`` (relative to the file) is read first; the file's keys merge over it, mappings key by
    key, lists replaced, and a base may have its own base."""
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "root.yaml").write_text(
        "players: 3\nseed: 5\nppo: {learning_rate: 1e-4, n_epochs: 7}\nnetwork: {net_arch: [64, 64]}\n"
    )
    (tmp_path / "recipes" / "middle.yaml").write_text("base: root.yaml\nseed: 6\nppo: {n_epochs: 3}\n")
    variant = tmp_path / "variant.yaml"
    variant.write_text("base: recipes/middle.yaml\nnetwork: {net_arch: [32]}\n")
    cfg = C.load(variant, ["ppo.gamma=0.9"])
    assert (cfg.players, cfg.seed) == (3, 6)  # the root's, then the middle's
    assert (cfg.ppo.learning_rate, cfg.ppo.n_epochs, cfg.ppo.gamma) == (1e-4, 3, 0.9)  # merged key by key
    assert cfg.network.net_arch == [32]  # a list is replaced, not merged
    assert cfg == C.from_dict(
        {
            "players": 3,
            "seed": 6,
            "ppo": {"learning_rate": 1e-4, "n_epochs": 3, "gamma": 0.9},
            "network": {"net_arch": [32]},
        }
    )


@pytest.mark.parametrize(
    ("files", "match"),
    [
        ({"v.yaml": "base: gone.yaml\n"}, "v.yaml: base: config file not found: .*gone.yaml"),
        (
            {"v.yaml": "base: [a.yaml]\n"},
            r"v.yaml: base: expected the path of another config file, got \['a.yaml'\]",
        ),
        ({"v.yaml": "base: ''\n"}, "v.yaml: base: expected the path of another config file, got ''"),
        (
            {"v.yaml": "base: a.yaml\n", "a.yaml": "base: v.yaml\n"},
            r"base: the bases form a cycle \(v.yaml -> a.yaml -> v.yaml\)",
        ),
        ({"v.yaml": "base: v.yaml\n"}, r"base: the bases form a cycle \(v.yaml -> v.yaml\)"),
        ({"v.yaml": "base: a.yaml\n", "a.yaml": "- 1\n"}, "a.yaml: the top level must be a mapping"),
        ({"v.yaml": "base: a.yaml\n", "a.yaml": "bogus: 1\n"}, "unknown key 'bogus'"),
    ],
)
def test_bad_bases_are_one_line_naming_the_file(tmp_path: Path, files: dict[str, str], match: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(C.ConfigError, match=match):
        C.load(tmp_path / "v.yaml")


def test_base_cannot_be_set_from_the_command_line(tmp_path: Path) -> None:
    """``base`` is read with the file; afterwards it is no field of the config."""
    path = tmp_path / "c.yaml"
    path.write_text("players: 2\n")
    with pytest.raises(C.ConfigError, match="unknown key 'base'"):
        C.load(path, ["base=other.yaml"])


def test_cli_reports_config_errors(capsys) -> None:
    from training.common.cli import run_cli
    from training.train import main

    assert run_cli(main, ["--config", str(CONFIGS[0]), "--set", "ppo.n_epochs=0"], prog="train") == 2
    assert capsys.readouterr().err == "train: error: ppo.n_epochs: must be >= 1, got 0\n"


@pytest.mark.slow
def test_pool_agents_must_play_the_configured_games() -> None:
    """A 2-player policy in a 3-player run, or a base-game policy in a module run, is refused up front."""
    pytest.importorskip("sb3_contrib")
    pool = {"opponents": {"pool": [{"spec": "ppo:ppo_2p"}]}}
    root = Path(__file__).resolve().parents[1]
    pool["opponents"]["pool"][0]["spec"] = f"ppo:{root / 'agents' / 'shipped' / 'ppo_2p.zip'}"
    C.from_dict(pool)  # 2 players, base game: fine
    with pytest.raises(
        C.ConfigError,
        match=r"^opponents\.pool\[0\]\.spec: PPO model .* was trained for 2 players, "
        r"base game; it cannot play 3 players, base game \(player count: trained for 2, game has 3\)",
    ):
        C.from_dict({**pool, "players": [2, 3]})
    with pytest.raises(
        C.ConfigError, match=r"^opponents\.pool\[0\]\.spec: agent .* plays only the base game"
    ):
        C.from_dict({**pool, "modules": ["cities"]})
    with pytest.raises(C.ConfigError, match=r"^eval\.opponents\[0\]: PPO model .* cannot play 4 players"):
        C.from_dict({"players": 4, "eval": {"opponents": [pool["opponents"]["pool"][0]["spec"]]}})
