"""Agent options: ``key=value`` text from a spec string, typed by each agent's table.

Why apart from the registry: the agents that take options (``mcts``, ``az``) parse and type them
with these two functions, and the registry calls the same ones, so an option is read one way.
"""

from __future__ import annotations

import math


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


__all__ = ["parse_options", "typed_options"]
