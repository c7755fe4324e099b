"""The four Cities of Splendor modules, one file each (docs/rules.md section 7).

A module file holds everything about its module: the rules text (its
docstring, with the engine decisions where the rulebook can be read two ways),
the names of its state fields, action blocks and phases (declared as rows in
:mod:`splendor_env.layout`, tagged with the module), its setup, legality,
effects, end-of-turn stage, observation section, describe text and invariants.

Numba cannot look modules up at run time, so the turn pipeline in
:mod:`splendor_env.rules` calls each module where it joins the turn, one
explicit line per hook, always behind the module's bit of ``s[MODULES]``.
To add a fifth module, follow the checklist in CONTRIBUTING.md.
"""

from __future__ import annotations

from . import cities, orient, strongholds, trading_posts

#: The module files in MODULE_NAMES order.
FILES = {"cities": cities, "trading_posts": trading_posts, "orient": orient, "strongholds": strongholds}

__all__ = ["FILES", "cities", "orient", "strongholds", "trading_posts"]
