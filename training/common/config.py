"""What every training config shares: YAML scalar types, ``--set`` overrides and one-line errors.

Why one module: a PPO run (:mod:`training.ppo.config`) and an expert-iteration run
(:mod:`training.expert_iteration.config`) each have their own schema, but read their file,
apply ``--set key=value`` overrides (dotted paths, list items by index) and fail
the same way: one :class:`ConfigError` line naming the field path, before anything runs.
"""

from __future__ import annotations

import copy
import math
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from splendor_env.state import MODULE_NAMES

ACTIVATIONS = ("tanh", "relu", "elu", "gelu")
SUPPORTED_MODULES: tuple[str, ...] = MODULE_NAMES  # any combination of the Cities of Splendor modules


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


def require(ok: bool, key: str, message: str) -> None:
    """The checks across fields: unless ``ok``, one :class:`ConfigError` line naming ``key``."""
    if not ok:
        raise ConfigError(f"{key}: {message}")


def player_counts(players: int | list[int]) -> list[int]:
    """A config's ``players`` (a count or a list of them) as a sorted list of distinct counts."""
    return [players] if isinstance(players, int) else sorted(set(players))


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


# -- one-line errors ---------------------------------------------------------------

_BOUNDS = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}
_KEYS = {"greater_than_equal": "ge", "greater_than": "gt", "less_than_equal": "le", "less_than": "lt"}


def _path(loc: tuple[Any, ...]) -> str:
    """``("opponents", "pool", 0, "spec")`` -> ``opponents.pool[0].spec``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "config"


def _known_keys(loc: tuple[Any, ...], root: type[BaseModel]) -> list[str]:
    """The field names of the section that holds ``loc[-1]`` in the config ``root``."""
    model = root
    for part in loc[:-1]:
        if isinstance(part, str) and part in model.model_fields:
            ann = model.model_fields[part].annotation
            for arg in (ann, *typing.get_args(ann)):
                if isinstance(arg, type) and issubclass(arg, BaseModel):
                    model = arg
    return list(model.model_fields)


def _message(err: dict[str, Any], root: type[BaseModel]) -> str:
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


class ConfigReader(typing.Generic[M]):
    """One kind of config's two readers, :meth:`from_dict` and :meth:`load`: the mapping over the
    model's defaults with the ``--set`` overrides, parsed, then the kind's own checks across
    fields, ``cross_checks(cfg, check_specs)`` (``check_specs``: also build the agent specs it names)."""

    def __init__(self, model: type[M], cross_checks: Callable[[M, bool], None]) -> None:
        self.model, self.cross_checks = model, cross_checks

    def from_dict(
        self, raw: dict[str, Any], overrides: list[str] | None = None, check_specs: bool = True
    ) -> M:
        """Parse and validate a raw mapping after the ``--set`` overrides (which can reach into defaults)."""
        cfg = parse_config(self.model, raw, overrides)
        self.cross_checks(cfg, check_specs)
        return cfg

    def load(self, path: str | Path, overrides: list[str] | None = None, check_specs: bool = True) -> M:
        """Read a YAML config file (:func:`read_mapping`), apply the overrides, parse and validate it."""
        return self.from_dict(read_mapping(path), overrides, check_specs)


def read_mapping(path: str | Path) -> dict[str, Any]:
    """The YAML mapping in ``path``; a missing, binary, empty or malformed file is one ConfigError line.

    A file may start from another with ``base: other.yaml`` (a path relative to the file): its
    mapping is the base's with this file's keys merged over it (mappings key by key, lists and
    scalars replaced), so a variant of a recipe lists only what it changes. Bases may chain."""
    return _read_with_bases(Path(path), ())


def _read_with_bases(path: Path, chain: tuple[Path, ...]) -> dict[str, Any]:
    raw = _read_one(path)
    if "base" not in raw:
        return raw
    base = raw.pop("base")
    if not isinstance(base, str) or not base.strip():
        raise ConfigError(f"{path}: base: expected the path of another config file, got {base!r}")
    base_path = (path.parent / base).resolve()
    here = (*chain, path.resolve())
    if base_path in here:
        cycle = " -> ".join(p.name for p in (*here, base_path))
        raise ConfigError(f"{path}: base: the bases form a cycle ({cycle})")
    if not base_path.is_file():
        raise ConfigError(f"{path}: base: config file not found: {str(base_path)!r}")
    return _merge(_read_with_bases(base_path, here), raw)


def _read_one(path: Path) -> dict[str, Any]:
    """One file's own mapping (its ``base`` not yet followed)."""
    if not path.is_file():
        raise ConfigError(f"config file not found: {str(path)!r}")
    try:
        text = path.read_bytes().decode("utf-8")
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
