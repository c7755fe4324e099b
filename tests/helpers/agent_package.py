"""A user's own agents as a package outside the checkout, for the tests of own agents and their faults."""

from __future__ import annotations

import textwrap
from pathlib import Path


def write_agent_package(root: Path, package: str, source: str) -> Path:
    """``root/PACKAGE/bots.py`` holding ``source`` and an empty ``__init__``; returns ``root``."""
    pkg = root / package
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "bots.py").write_text(textwrap.dedent(source))
    return root
