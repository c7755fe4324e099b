"""Training configuration: YAML file -> typed dataclasses, validated before anything runs.

A run is fully described by one YAML file plus ``--set key=value`` overrides
(dotted paths, list items by index: ``--set opponents.pool.1.weight=2``).
Overrides are applied to the raw mapping and then go through the same typed
parsing as the file, so ``--set ppo.learning_rate=3e-4`` becomes a float and
``--set n_envs=abc`` fails naming ``n_envs``. Every error is a
:class:`ConfigError` naming the offending key, raised before training starts.
"""

from __future__ import annotations

import copy
import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from splendor_env.state import DEFAULT_MAX_TURNS

SNAPSHOTS = "snapshots"  # pool spec meaning "a frozen past copy of the learner"
ACTIVATIONS = ("tanh", "relu", "elu", "gelu")
POLICIES = ("mlp", "card_slots")
SUPPORTED_MODULES: tuple[str, ...] = ()  # only the base game for now
MAX_N_ENVS = 4096  # games per batch; more buys no speed on a CPU and risks running out of memory
MAX_PRETRAIN_SAMPLES = 4_000_000  # teacher positions held in memory: ~2 KB each
MAX_ROLLOUT = 1 << 20  # n_steps * n_envs: ~2.4 GB of rollout buffer at 497 observation floats per step


class ConfigError(ValueError):
    """A bad configuration value; the message names the key."""


@dataclass
class NetworkConfig:
    net_arch: list[int] = field(default_factory=lambda: [128, 128])  # hidden layers, separate pi / vf MLPs
    activation: str = "tanh"
    scale_obs: bool = True  # divide raw counts by their typical maximum (agents.ppo.ScaledObs)
    card_features: bool = False  # add per-card "tokens still missing" features (agents.ppo.card_gaps)
    policy: str = "mlp"  # or "card_slots": one shared scorer per card slot (agents.ppo.CardSlotPolicy)


@dataclass
class PPOConfig:
    learning_rate: float = 3e-4
    final_learning_rate: float | None = None  # linear decay to this value if set
    n_steps: int = 64  # per game, per rollout
    batch_size: int = 2048
    n_epochs: int = 4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None
    normalize_advantage: bool = True


@dataclass
class EnvOptions:
    reward_mode: str = "terminal"  # or "shaped": + shaping_scale * prestige gained by the learner
    shaping_scale: float = 0.01
    max_turns: int = DEFAULT_MAX_TURNS


@dataclass
class PoolEntry:
    spec: str  # an agents.make spec ("random", "greedy", "ppo:PATH"...) or "snapshots"
    weight: float = 1.0
    final_weight: float | None = None  # linear from weight (step 0) to this (last step)


@dataclass
class OpponentsConfig:
    pool: list[PoolEntry] = field(default_factory=lambda: [PoolEntry("random")])
    snapshot_every: int = 200_000  # learner steps between frozen copies of the learner
    max_snapshots: int = 10  # keep the most recent ones
    snapshot_deterministic: bool = False  # snapshots sample their moves by default


@dataclass
class EvalConfig:
    every: int = 200_000  # learner steps between evaluations; 0 = only at the end
    games: int = 200  # per opponent, seat-rotated
    opponents: list[str] = field(default_factory=lambda: ["random", "greedy"])
    best_opponent: str | None = None  # eval opponent whose win rate selects best.zip (default: last)


@dataclass
class PretrainConfig:
    """Optional warm start: imitate a teacher agent (behaviour cloning) before PPO."""

    teacher: str | None = None  # agent spec, e.g. "greedy"; None = no pretraining
    samples: int = 500_000  # teacher decisions recorded (teacher plays every seat)
    epochs: int = 3
    batch_size: int = 2048
    learning_rate: float = 1e-3  # decays linearly to 0 over the epochs
    value_coef: float = 0.5  # value head also learns the discounted game outcome


@dataclass
class TrainConfig:
    players: int = 2
    modules: list[str] = field(default_factory=list)
    n_envs: int = 128  # games played in one batch
    total_timesteps: int = 1_000_000  # learner steps, as SB3 counts them
    seed: int = 0
    output_dir: str = "runs/ppo_2p"
    checkpoint_every: int = 500_000
    torch_threads: int = 1  # 1 beats 2 on a 2-core machine shared with the engine and other jobs
    max_wall_minutes: float | None = (
        None  # stop (then evaluate and save) after this long, pretraining included
    )
    init_from: str | None = None  # a MaskablePPO .zip whose policy weights start the run (same network)
    network: NetworkConfig = field(default_factory=NetworkConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    env: EnvOptions = field(default_factory=EnvOptions)
    opponents: OpponentsConfig = field(default_factory=OpponentsConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)


# -- typed parsing ---------------------------------------------------------------


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp).replace("typing.", ""))


def _parse(tp: Any, value: Any, path: str) -> Any:
    """Turn YAML data into ``tp``; errors name ``path``."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _parse(inner, value, path)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ConfigError(f"{path or 'config'}: expected a mapping, got {value!r}")
        hints = typing.get_type_hints(tp)
        known = [f.name for f in dataclasses.fields(tp)]
        for key in value:
            if key not in known:
                where = f"{path}.{key}" if path else str(key)
                raise ConfigError(f"{where}: unknown key {key!r}; known keys here: {known}")
        kwargs = {}
        for f in dataclasses.fields(tp):
            sub = f"{path}.{f.name}" if path else f.name
            if f.name in value:
                kwargs[f.name] = _parse(hints[f.name], value[f.name], sub)
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ConfigError(f"{sub}: required key is missing")
        return tp(**kwargs)
    if origin is list:
        (inner,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise ConfigError(f"{path}: expected a list, got {value!r}")
        return [_parse(inner, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{path}: expected true/false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool):
            raise ConfigError(f"{path}: expected an integer, got {value!r}")
        if isinstance(value, int):
            return value
        try:  # "1e6" / 1e6 are integers written as floats
            as_float = float(value)
        except (TypeError, ValueError):
            as_float = None
        if as_float is not None and as_float.is_integer():
            return int(as_float)
        raise ConfigError(f"{path}: expected an integer, got {value!r}")
    if tp is float:
        if isinstance(value, bool):
            raise ConfigError(f"{path}: expected a number, got {value!r}")
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):  # PyYAML reads 3e-4 (no dot) as a string
            try:
                return float(value)
            except ValueError:
                pass
        raise ConfigError(f"{path}: expected a number, got {value!r}")
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{path}: expected a string, got {value!r}")
        return value
    raise ConfigError(f"{path}: unsupported type {_type_name(tp)}")  # pragma: no cover


# -- overrides ----------------------------------------------------------------


def apply_override(raw: dict[str, Any], assignment: str) -> None:
    """Apply one ``a.b.c=value`` to the raw mapping (value parsed as YAML, typed later)."""
    if "=" not in assignment:
        raise ConfigError(f"--set {assignment!r}: expected KEY=VALUE, e.g. ppo.learning_rate=3e-4")
    key, text = assignment.split("=", 1)
    parts = key.strip().split(".")
    if not all(parts):
        raise ConfigError(f"--set {assignment!r}: empty key component")
    try:
        value = yaml.safe_load(text) if text.strip() else ""
    except yaml.YAMLError as e:
        raise ConfigError(f"--set {key}: cannot parse value {text!r}: {e}") from None
    node: Any = raw
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ConfigError(f"--set {key}: {'.'.join(parts[:i])} has no item {part!r}")
            if last:
                node[int(part)] = value
            else:
                node = node[int(part)]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})
        else:
            raise ConfigError(f"--set {key}: {'.'.join(parts[:i])} is not a mapping or list")


# -- validation -----------------------------------------------------------------


def _check(ok: bool, key: str, message: str) -> None:
    if not ok:
        raise ConfigError(f"{key}: {message}")


def check_agent_spec(spec: str, key: str) -> None:
    """An opponent spec must build an agent (``agents.make``); "snapshots" is the pool's own."""
    from training.selfplay import make_agent

    try:
        make_agent(spec)
    except Exception as e:  # noqa: BLE001 - any failure means the spec is unusable
        raise ConfigError(f"{key}: unknown or unusable agent spec {spec!r}: {e}") from None


def validate(cfg: TrainConfig, check_specs: bool = True) -> TrainConfig:
    """Range and consistency checks that the types alone do not express."""
    _check(2 <= cfg.players <= 4, "players", f"must be 2, 3 or 4, got {cfg.players}")
    for i, m in enumerate(cfg.modules):
        _check(m in SUPPORTED_MODULES, f"modules[{i}]", f"module {m!r} is not supported; only [] (base game)")
    _check(1 <= cfg.n_envs <= MAX_N_ENVS, "n_envs", f"must be in 1..{MAX_N_ENVS}, got {cfg.n_envs}")
    _check(cfg.total_timesteps >= 1, "total_timesteps", f"must be >= 1, got {cfg.total_timesteps}")
    _check(cfg.checkpoint_every >= 0, "checkpoint_every", f"must be >= 0, got {cfg.checkpoint_every}")
    _check(cfg.torch_threads >= 1, "torch_threads", f"must be >= 1, got {cfg.torch_threads}")
    if cfg.max_wall_minutes is not None:
        _check(cfg.max_wall_minutes > 0, "max_wall_minutes", f"must be > 0, got {cfg.max_wall_minutes}")
    _check(cfg.seed >= 0, "seed", f"must be >= 0, got {cfg.seed}")
    _check(bool(cfg.output_dir.strip()), "output_dir", "must not be empty")
    if cfg.init_from is not None:
        from training.model_file import model_zip_problem

        _check(Path(cfg.init_from).is_file(), "init_from", f"file not found: {cfg.init_from!r}")
        problem = model_zip_problem(cfg.init_from)
        _check(problem is None, "init_from", str(problem))
        _check(
            cfg.pretrain.teacher is None, "init_from", "set either init_from or pretrain.teacher, not both"
        )

    net = cfg.network
    _check(len(net.net_arch) >= 1, "network.net_arch", "needs at least one hidden layer")
    for i, width in enumerate(net.net_arch):
        _check(1 <= width <= 4096, f"network.net_arch[{i}]", f"layer width must be 1..4096, got {width}")
    _check(
        net.activation in ACTIVATIONS,
        "network.activation",
        f"must be one of {ACTIVATIONS}, got {net.activation!r}",
    )
    _check(net.policy in POLICIES, "network.policy", f"must be one of {POLICIES}, got {net.policy!r}")
    if net.policy == "card_slots":
        _check(
            net.scale_obs and net.card_features,
            "network.policy",
            "'card_slots' reads the card features: set network.scale_obs and network.card_features to true",
        )

    p = cfg.ppo
    _check(p.learning_rate > 0, "ppo.learning_rate", f"must be > 0, got {p.learning_rate}")
    if p.final_learning_rate is not None:
        _check(
            p.final_learning_rate >= 0,
            "ppo.final_learning_rate",
            f"must be >= 0, got {p.final_learning_rate}",
        )
    _check(p.n_steps >= 1, "ppo.n_steps", f"must be >= 1, got {p.n_steps}")
    _check(p.n_epochs >= 1, "ppo.n_epochs", f"must be >= 1, got {p.n_epochs}")
    rollout = p.n_steps * cfg.n_envs
    _check(
        rollout <= MAX_ROLLOUT,
        "ppo.n_steps",
        f"n_steps * n_envs must be <= {MAX_ROLLOUT:,} (rollout memory), got {rollout:,}",
    )
    _check(
        2 <= p.batch_size <= rollout,
        "ppo.batch_size",
        f"must be in 2..n_steps*n_envs = {rollout}, got {p.batch_size}",
    )
    _check(0 < p.gamma <= 1, "ppo.gamma", f"must be in (0, 1], got {p.gamma}")
    _check(0 <= p.gae_lambda <= 1, "ppo.gae_lambda", f"must be in [0, 1], got {p.gae_lambda}")
    _check(p.clip_range > 0, "ppo.clip_range", f"must be > 0, got {p.clip_range}")
    _check(p.ent_coef >= 0, "ppo.ent_coef", f"must be >= 0, got {p.ent_coef}")
    _check(p.vf_coef >= 0, "ppo.vf_coef", f"must be >= 0, got {p.vf_coef}")
    _check(p.max_grad_norm > 0, "ppo.max_grad_norm", f"must be > 0, got {p.max_grad_norm}")
    if p.target_kl is not None:
        _check(p.target_kl > 0, "ppo.target_kl", f"must be > 0, got {p.target_kl}")

    e = cfg.env
    _check(
        e.reward_mode in ("terminal", "shaped"),
        "env.reward_mode",
        f"must be 'terminal' or 'shaped', got {e.reward_mode!r}",
    )
    _check(e.shaping_scale >= 0, "env.shaping_scale", f"must be >= 0, got {e.shaping_scale}")
    _check(e.max_turns >= 1, "env.max_turns", f"must be >= 1, got {e.max_turns}")

    o = cfg.opponents
    _check(len(o.pool) >= 1, "opponents.pool", "needs at least one entry")
    for i, entry in enumerate(o.pool):
        key = f"opponents.pool[{i}]"
        _check(entry.weight >= 0, f"{key}.weight", f"must be >= 0, got {entry.weight}")
        if entry.final_weight is not None:
            _check(entry.final_weight >= 0, f"{key}.final_weight", f"must be >= 0, got {entry.final_weight}")
        if entry.spec != SNAPSHOTS and check_specs:
            check_agent_spec(entry.spec, f"{key}.spec")
    start = sum(e.weight for e in o.pool)
    end = sum(e.weight if e.final_weight is None else e.final_weight for e in o.pool)
    _check(start > 0 and end > 0, "opponents.pool", "weights must not all be zero (at the start or the end)")
    _check(o.snapshot_every >= 1, "opponents.snapshot_every", f"must be >= 1, got {o.snapshot_every}")
    _check(o.max_snapshots >= 1, "opponents.max_snapshots", f"must be >= 1, got {o.max_snapshots}")

    ev = cfg.eval
    _check(ev.every >= 0, "eval.every", f"must be >= 0, got {ev.every}")
    _check(ev.games >= 1, "eval.games", f"must be >= 1, got {ev.games}")
    for i, spec in enumerate(ev.opponents):
        _check(
            spec != SNAPSHOTS, f"eval.opponents[{i}]", "'snapshots' is only meaningful in the training pool"
        )
        if check_specs:
            check_agent_spec(spec, f"eval.opponents[{i}]")
    if ev.best_opponent is not None:
        _check(
            ev.best_opponent in ev.opponents,
            "eval.best_opponent",
            f"must be one of eval.opponents {ev.opponents}",
        )
    pt = cfg.pretrain
    if pt.teacher is not None:
        _check(pt.teacher != SNAPSHOTS, "pretrain.teacher", "must be an agent spec such as 'greedy'")
        if check_specs:
            check_agent_spec(pt.teacher, "pretrain.teacher")
    _check(
        1 <= pt.samples <= MAX_PRETRAIN_SAMPLES,
        "pretrain.samples",
        f"must be in 1..{MAX_PRETRAIN_SAMPLES:,} (memory), got {pt.samples:,}",
    )
    _check(pt.epochs >= 1, "pretrain.epochs", f"must be >= 1, got {pt.epochs}")
    _check(pt.batch_size >= 1, "pretrain.batch_size", f"must be >= 1, got {pt.batch_size}")
    _check(pt.learning_rate > 0, "pretrain.learning_rate", f"must be > 0, got {pt.learning_rate}")
    _check(pt.value_coef >= 0, "pretrain.value_coef", f"must be >= 0, got {pt.value_coef}")
    return cfg


def _merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """Recursive dict merge (``update`` wins; lists and scalars are replaced, not merged)."""
    out = copy.deepcopy(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def from_dict(
    raw: dict[str, Any], overrides: list[str] | None = None, check_specs: bool = True
) -> TrainConfig:
    """Parse and validate a raw mapping (after applying ``--set`` overrides)."""
    raw = _merge(to_dict(TrainConfig()), raw or {})  # so --set can reach into defaults (list items too)
    for assignment in overrides or []:
        apply_override(raw, assignment)
    return validate(_parse(TrainConfig, raw, ""), check_specs=check_specs)


def load(path: str | Path, overrides: list[str] | None = None, check_specs: bool = True) -> TrainConfig:
    """Read a YAML config file, apply overrides, parse and validate."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file not found: {str(path)!r}")
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not a UTF-8 text file (byte {e.start}); expected a YAML config") from None
    if "\x00" in text:
        raise ConfigError(f"{path}: binary file (NUL bytes); expected a YAML config")
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {' '.join(str(e).split())}") from None
    if raw is None:
        raise ConfigError(f"{path}: the config is empty; expected a YAML mapping such as 'players: 2'")
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the top level must be a mapping")
    return from_dict(raw, overrides, check_specs)


def to_dict(cfg: TrainConfig) -> dict[str, Any]:
    """Plain mapping (for the run directory's config.yaml and the summary)."""
    return dataclasses.asdict(cfg)
