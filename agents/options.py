"""Agent options: ``key=value`` text from a spec string, typed by each agent's table.

Why apart from the registry: the agents that take options (``mcts``, ``az``) parse and type them
with these functions, and the registry calls the same ones, so an option is read one way. A
user's own agent class (``package.module:Class,key=value``) has no table: its options are typed by
its constructor's signature (:func:`constructor_options`).
"""

from __future__ import annotations

import inspect
import math
from typing import Any


def parse_options(text: str) -> dict[str, str]:
    """``"a=1,b=x"`` -> ``{"a": "1", "b": "x"}`` (values stay strings; agents type them)."""
    options: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise ValueError(f"agent option {part!r} must be key=value")
        if key.strip() in options:
            raise ValueError(f"agent option {key.strip()!r} given twice")
        options[key.strip()] = value.strip()
    return options


def typed_options(
    noun: str, table: dict[str, tuple[type, object, str]], given: dict[str, object], hint: str = ""
) -> dict[str, object]:
    """``given`` options typed by ``table`` (name -> (type, default, help)), defaults filled in.

    Unknown names, non-numbers, booleans, fractional ints and non-finite floats are refused with
    the option named (``noun`` is e.g. ``"mcts parameter"``); range checks stay with each agent.
    """
    unknown = sorted(set(given) - set(table))
    if unknown:
        raise ValueError(f"unknown {noun}(s) {unknown}; valid keys: {sorted(table)}{hint}")
    out = {k: default for k, (_, default, _) in table.items()}
    for key, raw in given.items():
        typ = table[key][0]
        try:
            if isinstance(raw, bool) and typ is not str:
                raise ValueError
            value = typ(raw)
            if typ is int and isinstance(raw, float) and raw != int(raw):
                raise ValueError
            if typ is float and not math.isfinite(value):
                raise ValueError
        except (TypeError, ValueError):
            raise ValueError(f"{noun} {key}={raw!r} is not a valid {typ.__name__}") from None
        out[key] = value
    return out


_SIMPLE = {"int": int, "float": float, "bool": bool, "str": str}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _simple_type(param: inspect.Parameter) -> type | None:
    """int, float, bool or str from a parameter's annotation (a string under postponed annotations)
    or, without one, from its default; ``None`` when neither says (the value stays a string)."""
    note = param.annotation
    if isinstance(note, str):
        note = _SIMPLE.get(note.strip())
    if note in (int, float, bool, str):
        return note
    default = param.default
    if default is not inspect.Parameter.empty and type(default) in (int, float, bool, str):
        return type(default)
    return None


def _convert(label: str, key: str, raw: str, typ: type | None) -> object:
    if typ is None or typ is str:
        return raw
    if typ is bool:
        if raw.lower() in _TRUE + _FALSE:
            return raw.lower() in _TRUE
        raise ValueError(f"agent {label!r}: option {key}={raw!r} is not a bool (true/false, 1/0, yes/no)")
    try:
        value = typ(raw)
    except ValueError:
        raise ValueError(f"agent {label!r}: option {key}={raw!r} is not a valid {typ.__name__}") from None
    if typ is float and not math.isfinite(value):
        raise ValueError(f"agent {label!r}: option {key}={raw!r} is not a finite float")
    return value


def constructor_options(cls: Any, label: str, given: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """``given`` options checked and typed against ``cls``'s constructor; also whether it takes ``seed=``.

    Why the signature: a user's agent has no option table, but its ``__init__`` says which keywords
    it takes and (by annotation or default) their types, so ``my.mod:Agent,depth=3`` passes
    ``depth=3`` as an int. Strings from a spec are converted; values given as Python keywords are
    passed as they are. Unknown keys, missing required ones and unconvertible values are refused,
    each naming the agent and the option.
    """
    try:
        params = dict(inspect.signature(cls).parameters)
    except (TypeError, ValueError):  # a builtin or C class without a signature: pass everything on
        return dict(given), True
    open_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    named = {
        n: p
        for n, p in params.items()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    takes_seed = "seed" in named or open_kw
    keys = sorted(n for n in named if n != "seed")
    if "seed" in given:
        raise ValueError(f"agent {label!r}: seed is not an option (the command or make(seed=...) sets it)")
    unknown = sorted(set(given) - set(named))
    if unknown and not open_kw:
        raise ValueError(f"agent {label!r}: unknown option(s) {unknown}; valid keys: {keys}")
    missing = sorted(
        n for n, p in named.items() if n != "seed" and p.default is inspect.Parameter.empty and n not in given
    )
    if missing:
        raise ValueError(f"agent {label!r} needs option(s) {missing} (spec: {label},key=value)")
    out = {}
    for key, value in given.items():
        typ = _simple_type(named[key]) if key in named else None
        out[key] = _convert(label, key, value, typ) if isinstance(value, str) else value
    return out, takes_seed


__all__ = ["constructor_options", "parse_options", "typed_options"]
