"""Training configuration: YAML file -> typed pydantic models, validated before anything runs.

A run is fully described by one YAML file plus ``--set key=value`` overrides
(dotted paths, list items by index: ``--set opponents.pool.1.weight=2``).
Overrides are applied to the raw mapping and then go through the same typed
parsing as the file, so ``--set ppo.learning_rate=3e-4`` becomes a float and
``--set n_envs=abc`` fails naming ``n_envs``. Types and ranges live on the
fields (pydantic v2); every error is one :class:`ConfigError` line naming the
field path (``ppo.batch_size: ...``), raised before training starts.
"""

from __future__ import annotations

import copy
import math
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, ValidationError

from agents.pool import SNAPSHOTS  # pool spec meaning "a frozen past copy of the learner"
from splendor_env.state import DEFAULT_MAX_TURNS, MODULE_NAMES

ACTIVATIONS = ("tanh", "relu", "elu", "gelu")
POLICIES = ("mlp", "card_slots")
SUPPORTED_MODULES: tuple[str, ...] = MODULE_NAMES  # any combination of the Cities of Splendor modules
MAX_N_ENVS = 4096  # games per batch; more buys no speed on a CPU and risks running out of memory
MAX_PRETRAIN_SAMPLES = 4_000_000  # teacher positions held in memory: ~2 KB each
MAX_ROLLOUT = 1 << 20  # n_steps * n_envs: ~2.4 GB of rollout buffer at 497 observation floats per step


def _players(value: Any) -> Any:
    """``players``: one count (``3``) or a list of counts one policy learns together (``[3, 4]``)."""

    def count(v: Any) -> int:
        n = _int(v)
        if n not in (2, 3, 4):
            raise ValueError(f"a player count must be 2, 3 or 4, got {v!r}")
        return n

    if isinstance(value, list):
        if not value:
            raise ValueError("must not be empty (2, 3, 4 or a list of them)")
        counts = [count(v) for v in value]
        if len(set(counts)) != len(counts):
            raise ValueError(f"a player count is listed twice: {value!r}")
        return counts
    return count(value)


class ConfigError(ValueError):
    """A bad configuration value; the message names the key."""


# -- YAML-friendly scalar types ---------------------------------------------------


def _int(value: Any) -> Any:
    """Integers, also written as floats or strings (``1e6``, ``"26_000_000"``); never booleans."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        as_float = None if isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        as_float = None
    if as_float is None or not as_float.is_integer():
        raise ValueError(f"expected an integer, got {value!r}")
    return int(as_float)


def _float(value: Any) -> Any:
    """Finite numbers; PyYAML reads ``3e-4`` (no dot) as a string, so numeric strings count."""
    try:
        number = None if isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        number = None
    if number is None or not math.isfinite(number):
        raise ValueError(f"expected a finite number, got {value!r}")
    return number


def _str(value: Any) -> Any:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {value!r}")
    return value


def _optional(parse):  # None passes; anything else goes through ``parse``
    return BeforeValidator(lambda v: None if v is None else parse(v))


def Int(**limits: Any) -> Any:  # noqa: N802 - used like a type
    return Annotated[int, BeforeValidator(_int), Field(**limits)]


def Float(**limits: Any) -> Any:  # noqa: N802
    return Annotated[float, BeforeValidator(_float), Field(**limits)]


def OptFloat(**limits: Any) -> Any:  # noqa: N802
    return Annotated[Annotated[float, Field(**limits)] | None, _optional(_float)]


OptStr = Annotated[str | None, _optional(_str)]
Str = Annotated[str, BeforeValidator(_str)]


class Section(BaseModel):
    """A config mapping: an unknown key is an error (the message lists the known ones)."""

    model_config = ConfigDict(extra="forbid")


#: ``players``: one count (``3``) or a list of counts one network learns together (``[3, 4]``).
Players = Annotated[int | list[int], BeforeValidator(_players)]


# -- the config ------------------------------------------------------------------


class NetworkConfig(Section):
    net_arch: list[Int(ge=1, le=4096)] = Field(
        default=[128, 128], min_length=1
    )  # hidden layers, pi / vf MLPs
    activation: Literal[ACTIVATIONS] = "tanh"
    scale_obs: StrictBool = True  # divide raw counts by their typical maximum (agents.ppo.ScaledObs)
    card_features: StrictBool = False  # add per-card "tokens still missing" features (agents.ppo.card_gaps)
    policy: Literal[POLICIES] = (
        "mlp"  # or "card_slots": one shared scorer per card slot (agents.ppo.CardSlotPolicy)
    )


class PPOConfig(Section):
    learning_rate: Float(gt=0) = 3e-4
    final_learning_rate: OptFloat(ge=0) = None  # linear decay to this value if set
    n_steps: Int(ge=1) = 64  # per game, per rollout
    batch_size: Int(ge=2) = 2048  # at most n_steps * n_envs
    n_epochs: Int(ge=1) = 4
    gamma: Float(gt=0, le=1) = 0.995
    gae_lambda: Float(ge=0, le=1) = 0.95
    clip_range: Float(gt=0) = 0.2
    ent_coef: Float(ge=0) = 0.01
    vf_coef: Float(ge=0) = 0.5
    max_grad_norm: Float(gt=0) = 0.5
    target_kl: OptFloat(gt=0) = None
    normalize_advantage: StrictBool = True


class EnvOptions(Section):
    reward_mode: Literal["terminal", "shaped"] = "terminal"  # shaped: + shaping_scale * prestige gained
    shaping_scale: Float(ge=0) = 0.01
    max_turns: Int(ge=1) = DEFAULT_MAX_TURNS


class PoolEntry(Section):
    spec: Str  # an agents.make spec ("random", "greedy", "ppo:PATH"...) or "snapshots"
    weight: Float(ge=0) = 1.0
    final_weight: OptFloat(ge=0) = None  # linear from weight (step 0) to this (last step)


class OpponentsConfig(Section):
    pool: list[PoolEntry] = Field(default=[PoolEntry(spec="random")], min_length=1)
    snapshot_every: Int(ge=1) = 200_000  # learner steps between frozen copies of the learner
    max_snapshots: Int(ge=1) = 10  # keep the most recent ones
    snapshot_deterministic: StrictBool = False  # snapshots sample their moves by default


class EvalConfig(Section):
    every: Int(ge=0) = 200_000  # learner steps between evaluations; 0 = only at the end
    games: Int(ge=1) = 200  # per opponent, seat-rotated
    opponents: list[Str] = ["random", "greedy"]
    best_opponent: OptStr = None  # eval opponent whose win rate selects best.zip (default: last)


class PretrainConfig(Section):
    """Optional warm start: imitate a teacher agent (behaviour cloning) before PPO."""

    teacher: OptStr = None  # agent spec, e.g. "greedy"; None = no pretraining
    samples: Int(ge=1, le=MAX_PRETRAIN_SAMPLES) = 500_000  # teacher decisions recorded (every seat)
    epochs: Int(ge=1) = 3
    batch_size: Int(ge=1) = 2048
    learning_rate: Float(gt=0) = 1e-3  # decays linearly to 0 over the epochs
    value_coef: Float(ge=0) = 0.5  # value head also learns the discounted game outcome


class TrainConfig(Section):
    # one player count, or a list: one policy trained on every count (n_envs split evenly between them)
    players: Players = 2
    modules: list[Str] = []  # any of cities, trading_posts, orient, strongholds

    @property
    def player_counts(self) -> list[int]:
        """``players`` as a sorted list of distinct counts."""
        return [self.players] if isinstance(self.players, int) else sorted(set(self.players))

    n_envs: Int(ge=1, le=MAX_N_ENVS) = 128  # games played in one batch
    total_timesteps: Int(ge=1) = 1_000_000  # learner steps, as SB3 counts them
    seed: Int(ge=0) = 0
    output_dir: Str = "runs/ppo_2p"
    checkpoint_every: Int(ge=0) = 500_000
    torch_threads: Int(ge=1) = 1  # 1 beats 2 on a 2-core machine shared with the engine and other jobs
    max_wall_minutes: OptFloat(gt=0) = (
        None  # stop (then evaluate and save) after this long, warm start included
    )
    init_from: OptStr = None  # a MaskablePPO .zip whose policy weights start the run (same network)
    network: NetworkConfig = NetworkConfig()
    ppo: PPOConfig = PPOConfig()
    env: EnvOptions = EnvOptions()
    opponents: OpponentsConfig = OpponentsConfig()
    eval: EvalConfig = EvalConfig()
    pretrain: PretrainConfig = PretrainConfig()


# -- one-line errors ---------------------------------------------------------------

_BOUNDS = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}
_KEYS = {"greater_than_equal": "ge", "greater_than": "gt", "less_than_equal": "le", "less_than": "lt"}


def _path(loc: tuple[Any, ...]) -> str:
    """``("opponents", "pool", 0, "spec")`` -> ``opponents.pool[0].spec``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "config"


def _known_keys(loc: tuple[Any, ...], root: type[BaseModel] | None = None) -> list[str]:
    """The field names of the section that holds ``loc[-1]`` in ``root`` (default: :class:`TrainConfig`)."""
    model: type[BaseModel] = TrainConfig if root is None else root
    for part in loc[:-1]:
        if isinstance(part, str) and part in model.model_fields:
            ann = model.model_fields[part].annotation
            for arg in (ann, *typing.get_args(ann)):
                if isinstance(arg, type) and issubclass(arg, BaseModel):
                    model = arg
    return list(model.model_fields)


def _message(err: dict[str, Any], root: type[BaseModel] | None = None) -> str:
    kind, ctx, value, loc = err["type"], err.get("ctx", {}), err.get("input"), err["loc"]
    if kind == "extra_forbidden":
        return f"unknown key {loc[-1]!r}; known keys here: {_known_keys(loc, root)}"
    if kind == "missing":
        return "required key is missing"
    if kind == "value_error":
        return str(ctx["error"])
    if kind in _BOUNDS:
        bound = ctx[_KEYS[kind]]
        return f"must be {_BOUNDS[kind]} {bound if isinstance(bound, int) else f'{bound:g}'}, got {value!r}"
    if kind == "literal_error":
        return f"must be one of {ctx['expected']}, got {value!r}"
    if kind == "too_short":
        return f"must not be empty (needs at least {ctx['min_length']} item)"
    expected = {"bool_type": "true/false", "list_type": "a list", "model_type": "a mapping"}
    return f"expected {expected.get(kind, kind)}, got {value!r}"


def check_modules(modules: list[str], check: Callable[[bool, str, str], None]) -> None:
    """Every listed module is known and listed once (``check(ok, key, message)`` raises)."""
    for i, m in enumerate(modules):
        check(
            m in SUPPORTED_MODULES,
            f"modules[{i}]",
            f"unknown module {m!r}; known modules: {', '.join(SUPPORTED_MODULES)}",
        )
        check(m not in modules[:i], f"modules[{i}]", f"module {m!r} is listed twice")


def _cross_checks(cfg: TrainConfig, check_specs: bool) -> None:
    """The checks that involve more than one field, or the agent registry and the file system."""

    def check(ok: bool, key: str, message: str) -> None:
        if not ok:
            raise ConfigError(f"{key}: {message}")

    check_modules(cfg.modules, check)
    if isinstance(cfg.players, list):
        check(bool(cfg.players), "players", "must not be empty (2, 3, 4 or a list of them)")
        check(
            len(set(cfg.players)) == len(cfg.players),
            "players",
            f"a player count is listed twice: {cfg.players}",
        )
        check(
            cfg.n_envs >= len(cfg.players),
            "n_envs",
            f"must be >= the number of player counts ({len(cfg.players)}): each count gets its share of games",
        )
    check(bool(cfg.output_dir.strip()), "output_dir", "must not be empty")
    if cfg.init_from is not None:
        from training.common.model_file import model_zip_problem

        problem = model_zip_problem(cfg.init_from, cfg.modules)
        check(problem is None, "init_from", str(problem))
        check(cfg.pretrain.teacher is None, "init_from", "set either init_from or pretrain.teacher, not both")
    net = cfg.network
    if net.policy == "card_slots":
        check(
            net.scale_obs and net.card_features,
            "network.policy",
            "'card_slots' reads the card features: set network.scale_obs and network.card_features to true",
        )
    rollout = cfg.ppo.n_steps * cfg.n_envs
    check(
        rollout <= MAX_ROLLOUT, "ppo.n_steps", f"n_steps * n_envs must be <= {MAX_ROLLOUT:,}, got {rollout:,}"
    )
    check(
        cfg.ppo.batch_size <= rollout,
        "ppo.batch_size",
        f"must be in 2..n_steps*n_envs = {rollout}, got {cfg.ppo.batch_size}",
    )
    pool = cfg.opponents.pool
    start = sum(e.weight for e in pool)
    end = sum(e.weight if e.final_weight is None else e.final_weight for e in pool)
    check(start > 0 and end > 0, "opponents.pool", "weights must not all be zero (at the start or the end)")
    ev = cfg.eval
    for i, spec in enumerate(ev.opponents):
        check(
            spec != SNAPSHOTS, f"eval.opponents[{i}]", "'snapshots' is only meaningful in the training pool"
        )
    if ev.best_opponent is not None:
        check(
            ev.best_opponent in ev.opponents,
            "eval.best_opponent",
            f"must be one of eval.opponents {ev.opponents}",
        )
    teacher = cfg.pretrain.teacher
    check(teacher != SNAPSHOTS, "pretrain.teacher", "must be an agent spec such as 'greedy'")
    if check_specs:
        specs = [(f"opponents.pool[{i}].spec", e.spec) for i, e in enumerate(pool) if e.spec != SNAPSHOTS]
        specs += [(f"eval.opponents[{i}]", s) for i, s in enumerate(ev.opponents)]
        specs += [("pretrain.teacher", teacher)] if teacher is not None else []
        for key, spec in specs:
            check_agent_spec(spec, key, cfg.player_counts, tuple(cfg.modules))


def check_agent_spec(
    spec: str, key: str, player_counts: list[int] | None = None, modules: tuple[str, ...] = ()
) -> None:
    """An opponent spec must build an agent (``agents.make``) that plays the run's games."""
    from agents import build
    from training.common.games import check_plays

    try:
        agent = build(spec)
    except Exception as e:  # noqa: BLE001 - any failure means the spec is unusable
        raise ConfigError(f"{key}: unknown or unusable agent spec {spec!r}: {e}") from None
    try:
        for n in player_counts or [2]:
            check_plays(agent, spec, n, modules)
    except ValueError as e:
        raise ConfigError(f"{key}: {e}") from None


def validate(raw: dict[str, Any], check_specs: bool = True) -> TrainConfig:
    """Parse a raw mapping into a :class:`TrainConfig`; the first problem becomes one ConfigError line."""
    cfg = parse_model(TrainConfig, raw)
    _cross_checks(cfg, check_specs)
    return cfg


M = typing.TypeVar("M", bound=BaseModel)


def parse_model(model: type[M], raw: dict[str, Any]) -> M:
    """``model`` from a raw mapping; the first problem becomes one :class:`ConfigError` naming the key."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(f"{_path(err['loc'])}: {_message(err, model)}") from None


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


def _merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """Recursive dict merge (``update`` wins; lists and scalars are replaced, not merged)."""
    out = copy.deepcopy(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def with_defaults(model: type[BaseModel], raw: dict[str, Any], overrides: list[str] | None) -> dict[str, Any]:
    """``raw`` over ``model``'s defaults, then the ``--set`` overrides (which can reach into defaults,
    list items too); still raw, parsed by the caller."""
    raw = _merge(model().model_dump(), raw or {})
    for assignment in overrides or []:
        apply_override(raw, assignment)
    return raw


def parse_config(model: type[M], raw: dict[str, Any], overrides: list[str] | None = None) -> M:
    """``raw`` over ``model``'s defaults, then the ``--set`` overrides, parsed: how every config is read.

    The checks across fields are the caller's (each config has its own)."""
    return parse_model(model, with_defaults(model, raw, overrides))


def load_config(model: type[M], path: str | Path, overrides: list[str] | None = None) -> M:
    """The YAML file ``path`` (:func:`read_mapping`) as :func:`parse_config` reads a mapping."""
    return parse_config(model, read_mapping(path), overrides)


def from_dict(
    raw: dict[str, Any], overrides: list[str] | None = None, check_specs: bool = True
) -> TrainConfig:
    """Parse and validate a raw mapping (after applying ``--set`` overrides)."""
    cfg = parse_config(TrainConfig, raw, overrides)
    _cross_checks(cfg, check_specs)
    return cfg


def load(path: str | Path, overrides: list[str] | None = None, check_specs: bool = True) -> TrainConfig:
    """Read a YAML config file, apply overrides, parse and validate."""
    cfg = load_config(TrainConfig, path, overrides)
    _cross_checks(cfg, check_specs)
    return cfg


def read_mapping(path: str | Path) -> dict[str, Any]:
    """The YAML mapping in ``path``; a missing, binary, empty or malformed file is one ConfigError line."""
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
    return raw


def to_dict(cfg: TrainConfig) -> dict[str, Any]:
    """Plain mapping (for the run directory's config.yaml and the summary)."""
    return cfg.model_dump()
