"""The site's generated parts come from the code; these tests keep the pages and the code in sync.

A page's generated part is committed between ``<!-- generated: NAME -->`` and
``<!-- end generated -->`` (so the page reads the same in the repository), and
``docs/hooks.py`` fills it afresh when ``mkdocs build`` runs. Here the
committed text must be what the code generates now (``python docs/hooks.py``
rewrites it), so a table that no longer matches the code, a marker that names
nothing or one without its end fails a test.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

import splendor_env
from splendor_env import modules
from splendor_env.state import MODULE_NAMES

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = _hooks()


def page(name: str) -> str:
    """A page as the site shows it: its generated parts filled in."""
    return hooks.expand((DOCS / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", sorted(DOCS.rglob("*.md")), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_every_marker_names_a_generated_part(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expanded = hooks.expand(text)
    assert not re.search(r"^<!-- (end )?generated", expanded, flags=re.M), "a marker line was left unfilled"
    for name in hooks.MARKER.findall(text):
        assert hooks.generate(name).strip() in expanded


@pytest.mark.parametrize("path", hooks.pages(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_the_committed_generated_parts_are_what_the_code_generates(path: Path) -> None:
    """The repository's page says what the site says: rerun ``python docs/hooks.py`` when this fails."""
    text = path.read_text(encoding="utf-8")
    assert hooks.regenerate(text) == text, "stale generated part: run `python docs/hooks.py`"


def test_the_generated_pages_include_the_tables_and_the_api_summary() -> None:
    generated = {p.relative_to(DOCS).as_posix() for p in hooks.pages()}
    assert {"game/spaces.md", "game/modules.md", "reference.md", "data.md"} <= generated
    for module in MODULE_NAMES:
        assert f"modules/{module}.md" in generated


def test_the_api_summary_lists_every_object_of_the_reference() -> None:
    text = (DOCS / "reference.md").read_text(encoding="utf-8")
    names = hooks.reference_objects(text)
    assert "splendor_env.vector.SplendorBatch" in names and "splendor_env.raw_env" in names
    summary = hooks.generate("api_summary")
    assert [line.split("`")[1] for line in summary.splitlines()] == names


def test_a_stale_or_unclosed_generated_part_is_caught() -> None:
    stale = "<!-- generated: action_table -->\nold table\n<!-- end generated -->\n"
    assert hooks.regenerate(stale) != stale
    assert splendor_env.action_table() in hooks.regenerate(stale)
    with pytest.raises(ValueError, match="end generated"):
        hooks.expand("<!-- generated: action_table -->\n")


def test_the_spaces_page_prints_the_current_action_table_and_observation_layout() -> None:
    text = page("game/spaces.md")
    assert f"```text\n{splendor_env.action_table()}\n```" in text
    assert f"```text\n{splendor_env.layout_table()}\n```" in text
    assert f"Discrete({splendor_env.NUM_ACTIONS})" in text
    assert f"float32[{splendor_env.OBS_DIM}]" in text


def test_the_modules_page_prints_the_module_action_table_and_observation_layout() -> None:
    text = page("game/modules.md")
    assert splendor_env.action_table(modules=True) in text
    assert splendor_env.layout_table(modules=True) in text
    assert f"Discrete({splendor_env.NUM_ACTIONS_ALL})" in text
    assert f"{splendor_env.OBS_DIM_ALL}-float" in text


@pytest.mark.parametrize("module", MODULE_NAMES)
def test_each_module_page_is_its_files_docstring(module: str) -> None:
    text = page(f"modules/{module}.md")
    doc = modules.FILES[module].__doc__
    assert "Owns" in text and "Rules ([docs/rules.md](../rules.md) 7." in text
    # every line of the docstring is on the page, reST markup aside
    for line in doc.strip().splitlines():
        plain = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", line).replace("``", "`").strip()
        assert plain.replace("docs/rules.md", "[docs/rules.md](../rules.md)") in text, line


def test_the_data_page_is_the_package_datas_readme() -> None:
    readme = (ROOT / "splendor_env" / "data" / "README.md").read_text(encoding="utf-8")
    text = page("data.md")
    for line in readme.splitlines():
        assert line.replace("RULES.md section", "[the rules](rules.md), section") in text, line
    assert "RULES.md" not in text


def test_unknown_generated_parts_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown generated part"):
        hooks.generate("no_such_table")
    with pytest.raises(ValueError, match="unknown module"):
        hooks.generate("module:no_such_module")


def test_the_rules_page_is_the_specification() -> None:
    """docs/rules.md is the project's RULES.md with its links made to work inside the site."""
    shared = Path("/work/shared/RULES.md")
    if not shared.exists():
        pytest.skip("the reference RULES.md is not on this machine")
    text = shared.read_text(encoding="utf-8")
    for old, new in [
        (
            "rulebooks in\n`seeds/` (",
            "rulebooks in\n`seeds/`, kept beside the project and not shipped with it (",
        ),
        (
            "- Card and noble data: `data/` in this folder (see `data/README.md`).",
            "- Card and noble data: `splendor_env/data/` in the package (see [Card and tile data](data.md)).",
        ),
        ("Data: `data/cities.csv`.", "Data: `splendor_env/data/cities.csv`."),
        (
            "`effect` column of `data/orient_cards.csv`",
            "`effect` column of `splendor_env/data/orient_cards.csv`",
        ),
    ]:
        assert old in text
        text = text.replace(old, new)
    assert (DOCS / "rules.md").read_text(encoding="utf-8") == text


def test_every_nav_page_exists_and_every_page_is_in_the_nav() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", config, flags=re.M))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert nav == pages


def test_changelog_follows_keep_a_changelog_and_names_the_current_version() -> None:
    """``## [Unreleased]`` first, then ``## [X.Y.Z] - YYYY-MM-DD``; only the six kinds of section.

    The current version is either released (its own heading) or the one the
    Unreleased section says it will be released as.
    """
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## (.*)$", changelog, flags=re.M)
    assert versions[0] == "[Unreleased]", versions[0]
    for heading in versions[1:]:
        assert re.fullmatch(r"\[\d+\.\d+\.\d+\] - \d{4}-\d\d-\d\d", heading), heading
    kinds = set(re.findall(r"^### (.*)$", changelog, flags=re.M))
    assert kinds <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, kinds
    version = splendor_env.__version__
    unreleased = changelog.split("## [Unreleased]", 1)[1].split("\n## ", 1)[0]
    assert f"## [{version}] - " in changelog or f"released as {version}," in unreleased
    for block in re.split(r"^## ", changelog, flags=re.M)[1:]:
        order = re.findall(r"^### (.*)$", block, flags=re.M)
        canonical = ["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"]
        assert order == sorted(order, key=canonical.index), (block.splitlines()[0], order)
