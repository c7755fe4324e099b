"""MkDocs hook: fill the pages' generated parts from the code, so the site cannot drift from it.

A page asks for a generated part with an HTML comment on a line of its own,
``<!-- generated: NAME -->``; :func:`expand` replaces it with the code's action
table or observation layout (``action_table``, ``layout_table``,
``module_action_table``, ``module_layout_table``), the package data's README
(``data_readme``) or, for ``module:NAME``, the rules text of that Cities of
Splendor module, its file's own docstring. ``tests/test_docs.py`` runs
:func:`expand` on every page and checks the result against the code.

The leaderboard page (``docs/leaderboard.md``) is generated whole from the committed benchmark
cards (:func:`training.matches.leaderboard.leaderboard_markdown`) at every build, and each card's
``card.md`` and ``card.png`` join the site under ``cards/`` (:func:`on_files`), where its rows link.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

MARKER = re.compile(r"^<!-- generated: ([\w:]+) -->$", flags=re.M)
ROOT = Path(__file__).resolve().parents[1]
#: the page generated whole from the cards, and where the site keeps the cards' pages and figures
LEADERBOARD = "leaderboard.md"
SITE_CARDS = "cards"


def _text_block(text: str) -> str:
    return f"```text\n{text}\n```"


def _tables() -> dict[str, Callable[[], str]]:
    import splendor_env

    return {
        "action_table": lambda: _text_block(splendor_env.action_table()),
        "layout_table": lambda: _text_block(splendor_env.layout_table()),
        "module_action_table": lambda: _text_block(splendor_env.action_table(modules=True)),
        "module_layout_table": lambda: _text_block(splendor_env.layout_table(modules=True)),
    }


def module_rules(name: str) -> str:
    """A module file's docstring as Markdown: reST roles and double backticks become code spans."""
    from splendor_env.state import MODULE_NAMES

    if name not in MODULE_NAMES:
        raise ValueError(f"unknown module {name!r}; known: {list(MODULE_NAMES)}")
    doc = importlib.import_module(f"splendor_env.modules.{name}").__doc__ or ""
    doc = re.sub(r":(?:mod|func|class|meth|attr|data):`~?([^`]+)`", r"`\1`", doc)
    doc = re.sub(r"``(.+?)``", r"`\1`", doc, flags=re.S)
    doc = doc.replace("docs/rules.md", "[docs/rules.md](../rules.md)")  # module pages live in docs/modules/
    summary, _, rest = doc.strip().partition("\n\n")
    return f"{summary.strip()}\n\n{rest.strip()}\n"


def data_readme() -> str:
    """The package data's README (``splendor_env/data/README.md``, pinned byte for byte) made site-ready.

    A list straight after a paragraph gets the blank line Python-Markdown needs,
    and its citation of the rules links to the rules page.
    """
    import splendor_env

    text = (Path(splendor_env.__file__).parent / "data" / "README.md").read_text(encoding="utf-8")
    text = re.sub(r"^([^\s-].*)\n(- )", r"\1\n\n\2", text, flags=re.M)
    return text.replace("RULES.md section", "[the rules](rules.md), section").strip() + "\n"


def generate(name: str) -> str:
    """The text the marker ``<!-- generated: name -->`` stands for."""
    if name.startswith("module:"):
        return module_rules(name.partition(":")[2])
    if name == "data_readme":
        return data_readme()
    tables = _tables()
    if name not in tables:
        raise ValueError(
            f"unknown generated part {name!r}; known: {sorted(tables)}, data_readme, module:NAME"
        )
    return tables[name]()


def expand(markdown: str) -> str:
    """``markdown`` with every generated-part marker replaced by its text."""
    return MARKER.sub(lambda m: generate(m.group(1)), markdown)


def leaderboard() -> str:
    """The leaderboard page as the site shows it: generated from the cards now, linking to their site copies."""
    from training.matches.leaderboard import CARDS, leaderboard_markdown

    return leaderboard_markdown(ROOT / CARDS, link_root=SITE_CARDS)


def on_files(files: Any, config: Any) -> Any:
    """Every committed card's ``card.md`` (a page, in no nav) and ``card.png`` join the site under ``cards/``."""
    from mkdocs.structure.files import File, InclusionLevel

    from training.matches.leaderboard import CARDS, read_cards

    for folder, _ in read_cards(ROOT / CARDS):
        for name in ("card.md", "card.png"):
            path = ROOT / CARDS / folder / name
            if path.is_file():
                files.append(
                    File.generated(
                        config,
                        f"{SITE_CARDS}/{folder}/{name}",
                        abs_src_path=str(path),
                        inclusion=InclusionLevel.NOT_IN_NAV,
                    )
                )
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri == LEADERBOARD:
        return leaderboard()
    return expand(markdown)


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """The docstrings' reST roles (``:func:`x```) reach the API page as ``:func:<code>x</code>``: drop the role."""
    return re.sub(r":(?:mod|func|class|meth|attr|data|exc):(<code>)~?", r"\1", html)
