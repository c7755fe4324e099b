"""MkDocs hook and generator: the pages' generated parts come from the code and are committed too.

A generated part is a region of a page between two HTML comments, each on a
line of its own::

    <!-- generated: NAME -->
    ...the text the code generates for NAME...
    <!-- end generated -->

NAME is the code's action table or observation layout (``action_table``,
``layout_table``, ``module_action_table``, ``module_layout_table``), the
package data's README (``data_readme``), the API reference's summary of the
objects its page documents (``api_summary``) or, for ``module:NAME``, the
rules text of that Cities of Splendor module, its file's own docstring. The
text between the comments is committed, so a page reads the same in the
repository as on the site; ``python docs/hooks.py`` rewrites it from the code
(``--check``: only say which pages differ) and ``tests/test_docs.py`` fails
when the committed text is not what the code generates. The site build fills
every region afresh (:func:`expand`), so the site cannot drift either.

The leaderboard page (``docs/results/leaderboard.md``) is generated whole from the committed benchmark
cards (:func:`training.matches.leaderboard.leaderboard_markdown`) at every build, and each card's
``card.md`` and ``card.png`` join the site under ``cards/`` (:func:`on_files`), where its rows link.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The first line of a generated part: ``<!-- generated: NAME -->``.
MARKER = re.compile(r"^<!-- generated: ([\w:]+) -->$", flags=re.M)
#: The line that ends it.
END = "<!-- end generated -->"
#: A whole generated part: its first line, the committed text, its last line.
REGION = re.compile(r"^<!-- generated: ([\w:]+) -->\n(.*?)^<!-- end generated -->$", flags=re.M | re.S)
DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
#: the page generated whole from the cards, and where the site keeps the cards' pages and figures
LEADERBOARD = "results/leaderboard.md"
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


def _plain(doc: str) -> str:
    """reST roles and double backticks as Markdown code spans."""
    doc = re.sub(r":(?:mod|func|class|meth|attr|data|exc):`~?([^`]+)`", r"`\1`", doc)
    return re.sub(r"``(.+?)``", r"`\1`", doc, flags=re.S)


def module_rules(name: str) -> str:
    """A module file's docstring as Markdown: reST roles and double backticks become code spans."""
    from splendor_env.state import MODULE_NAMES

    if name not in MODULE_NAMES:
        raise ValueError(f"unknown module {name!r}; known: {list(MODULE_NAMES)}")
    doc = _plain(importlib.import_module(f"splendor_env.modules.{name}").__doc__ or "")
    doc = doc.replace("docs/rules.md", "[docs/rules.md](../rules.md)")  # module pages live in docs/modules/
    summary, _, rest = doc.strip().partition("\n\n")
    return f"{summary.strip()}\n\n{rest.strip()}\n"


def data_readme() -> str:
    """The package data's README (``splendor_env/data/README.md``, pinned byte for byte) made site-ready.

    Its title is left out (the page has the same one, then a paragraph of its
    own), a list straight after a paragraph gets the blank line Python-Markdown
    needs, and its citation of the rules links to the rules page.
    """
    import splendor_env

    text = (Path(splendor_env.__file__).parent / "data" / "README.md").read_text(encoding="utf-8")
    text = re.sub(r"\A# .*\n+", "", text)
    text = re.sub(r"^([^\s-].*)\n(- )", r"\1\n\n\2", text, flags=re.M)
    return text.replace("RULES.md section", "[the rules](rules.md), section").strip() + "\n"


def reference_objects(page: str | None = None) -> list[str]:
    """The dotted names the API reference documents: its ``::: NAME`` lines, a ``members`` list expanded."""
    if page is None:
        page = (DOCS / "reference.md").read_text(encoding="utf-8")
    names: list[str] = []
    for m in re.finditer(r"^::: ([\w.]+)\n((?:[ \t]+.*\n?)*)", page, flags=re.M):
        members = re.findall(r"^\s+- (\w+)\s*$", m.group(2), flags=re.M)
        names.extend(f"{m.group(1)}.{member}" for member in members) if members else names.append(m.group(1))
    return names


def _first_sentence(doc: str) -> str:
    paragraph = " ".join(_plain(doc).strip().split("\n\n")[0].split())
    sentence = re.split(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.!?])\s+(?=[A-Z`(\[])", paragraph)[0]
    return sentence if sentence.endswith((".", "!", "?", ":")) else sentence + "."


def api_summary() -> str:
    """One line per object the API reference documents: its name and its docstring's first sentence.

    Read from the sources by griffe, as mkdocstrings reads them, so the list
    says what the site's reference below it shows in full.
    """
    import griffe

    loader = griffe.GriffeLoader(search_paths=[str(ROOT)])
    names = reference_objects()
    for package in sorted({name.split(".")[0] for name in names}):
        loader.load(package)
    loader.resolve_aliases(implicit=False, external=None)
    lines = []
    for name in names:
        obj = loader.modules_collection[name]
        doc = obj.docstring.value if obj.docstring else ""
        if doc:
            what = _first_sentence(doc)
        elif obj.kind.value == "attribute" and obj.value is not None:
            what = f"`{obj.value}`."
        else:
            raise ValueError(f"{name} has no docstring for the API reference")
        lines.append(f"- `{name}` ({obj.kind.value}): {what}")
    return "\n".join(lines)


GENERATED: dict[str, Callable[[], str]] = {"data_readme": data_readme, "api_summary": api_summary}


def generate(name: str) -> str:
    """The text of the generated part ``name``, without a trailing newline."""
    if name.startswith("module:"):
        return module_rules(name.partition(":")[2]).strip()
    if name in GENERATED:
        return GENERATED[name]().strip()
    tables = _tables()
    if name not in tables:
        raise ValueError(
            f"unknown generated part {name!r}; known: {sorted(tables) + sorted(GENERATED)}, module:NAME"
        )
    return tables[name]()


def _check_pairs(markdown: str) -> None:
    """Refuse a ``generated`` line without its ``end generated`` line, or the other way round."""
    starts = MARKER.findall(markdown)
    regions = REGION.findall(markdown)
    ends = re.findall(rf"^{re.escape(END)}$", markdown, flags=re.M)
    if len(starts) != len(regions) or len(ends) != len(regions):
        raise ValueError(f"a generated part lacks its {END!r} line (or an end has no start): {starts}")


def regenerate(markdown: str) -> str:
    """``markdown`` with the text of every generated part replaced by what the code generates now."""
    _check_pairs(markdown)
    return REGION.sub(lambda m: f"<!-- generated: {m.group(1)} -->\n{generate(m.group(1))}\n{END}", markdown)


def expand(markdown: str) -> str:
    """``markdown`` as the site shows it: every generated part filled afresh, its comment lines dropped."""
    _check_pairs(markdown)
    return REGION.sub(lambda m: generate(m.group(1)), markdown)


def pages() -> list[Path]:
    """Every page of the site with a generated part."""
    return [p for p in sorted(DOCS.rglob("*.md")) if MARKER.search(p.read_text(encoding="utf-8"))]


def leaderboard() -> str:
    """The leaderboard page as the site shows it: generated from the cards now, linking to their site copies."""
    from training.matches.leaderboard import CARDS, leaderboard_markdown

    return leaderboard_markdown(ROOT / CARDS, link_root=f"../{SITE_CARDS}")


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


def main(argv: list[str] | None = None) -> int:
    """``python docs/hooks.py``: rewrite every page's generated parts from the code; ``--check``: list stale pages."""
    import argparse

    ap = argparse.ArgumentParser(prog="python docs/hooks.py", description=main.__doc__)
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 naming the stale pages")
    args = ap.parse_args(argv)
    stale = []
    for path in pages():
        text = path.read_text(encoding="utf-8")
        new = regenerate(text)
        if new != text:
            stale.append(path.relative_to(ROOT).as_posix())
            if not args.check:
                path.write_text(new, encoding="utf-8")
    verb = "stale" if args.check else "rewritten"
    print("\n".join(f"{verb}: {page}" for page in stale) or "every generated part is up to date")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(ROOT))
    sys.exit(main())
