"""The manual stays a manual: short task pages, each saying what it is for, with no experiment log in it.

The manual is every page of the site (``docs/**/*.md``) except the results
(``docs/results/``), the development notes (``docs/development-notes.md``) and
the specification (``docs/rules.md``). Its words are prose words: a page's own
text without fenced code blocks, HTML comments and generated parts (the text
between ``<!-- generated: NAME -->`` and ``<!-- end generated -->``, which is
the code's, see ``docs/hooks.py``); a word is a whitespace-separated token
with a letter or a digit in it. A page that includes a file
(``--8<-- "CHANGELOG.md"``) counts its include line only: the changelog and
``CONTRIBUTING.md`` are records and the maintainers' guide, not the manual.

The rules, each a test below:

* at most ``MAX_TOTAL`` words in all and ``MAX_PAGE`` on any page;
* every page opens (after its title) with a paragraph of at least
  ``MIN_OPENING`` words saying what it is for, not with a code block, a table,
  a list or a heading;
* no dated narrative: a *unit* (a table row, or a sentence of a paragraph; a
  sentence that ends with ``:`` right before a table or code block takes that
  block with it) that holds a date (``YYYY-MM-DD``) or a commit hash (7 to 40
  hex digits with at least one digit and one letter) must hold a figure too (a
  number with a unit, at most one word between them: ``%``, ``ms``, ``s``,
  ``min``, ``positions/s``, ``learner steps``, ``games``, ``x2.8`` ...), so a date or a commit only ever says when and where a figure
  was measured; and no unit anywhere in the manual tells an experiment
  (``NARRATIVE``: "we tried", "made az weaker", "its first 40 minutes" ...).
  Such write-ups belong in the results pages or the development notes. The
  README and ``CONTRIBUTING.md`` keep this rule too.

``python tests/test_docs_manual.py`` prints every page's words.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

MAX_TOTAL = 18_000
MAX_PAGE = 2_500
MIN_OPENING = 15

#: Pages that are not the manual (relative to docs/): results, development notes, the specification.
NOT_MANUAL = ("results/", "development-notes.md", "rules.md")

FENCE = re.compile(r"^(```|~~~)[^\n]*\n.*?^\1[ \t]*$", flags=re.S | re.M)
GENERATED = re.compile(r"^<!-- generated: [\w:]+ -->\n.*?^<!-- end generated -->$", flags=re.S | re.M)
COMMENT = re.compile(r"<!--.*?-->", flags=re.S)

DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
COMMIT = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
UNITS = (
    r"%|x\b|ms\b|µs|us\b|ns\b|s\b|sec\b|seconds?\b|min\b|minutes?\b|h\b|hours?\b|MB\b|GB\b|KB\b|[KMG]iB\b"
    r"|positions?\b|games?\b|moves?\b|steps?\b|env steps\b|simulations?\b|sims\b|iterations?\b|Elo\b"
    r"|frames?\b|a second\b|/s\b|a move\b|per second\b"
)
FIGURE = re.compile(rf"(?:\d[\d,.]*\s?(?:[a-z]+\s)?(?:{UNITS}))|(?:\bx\d[\d.]*)|(?:Elo \d)")
#: Phrases that tell an experiment rather than what to do.
NARRATIVE = [
    re.compile(p, flags=re.I)
    for p in (
        r"\bwe (?:tried|found|measured|chose|decided)\b",
        r"\b(?:was|were) tried\b",
        r"\bthe ones tried\b",
        r"\bmade `?az`? (?:weaker|stronger)\b",
        r"\bits first \d+ minutes\b",
        r"\bthe first \d+ minutes made\b",
    )
]
SENTENCE_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?<!etc\.)(?<=[.!?])\s+(?=[A-Z`(*\[])")


def manual_pages() -> list[Path]:
    return [
        p for p in sorted(DOCS.rglob("*.md")) if not p.relative_to(DOCS).as_posix().startswith(NOT_MANUAL)
    ]


def prose(text: str) -> str:
    """The page's own prose: no code blocks, comments or generated parts."""
    return COMMENT.sub("", FENCE.sub("", GENERATED.sub("", text)))


def words(text: str) -> int:
    return sum(1 for w in prose(text).split() if re.search(r"\w", w))


def blocks(text: str) -> list[str]:
    """The page cut into blocks: each code block whole, the rest at blank lines (generated parts dropped)."""
    text = COMMENT.sub("", GENERATED.sub("", text))
    out: list[str] = []
    pos = 0
    for m in FENCE.finditer(text):
        out += [b for b in re.split(r"\n\s*\n", text[pos : m.start()]) if b.strip()]
        out.append(m.group(0))
        pos = m.end()
    out += [b for b in re.split(r"\n\s*\n", text[pos:]) if b.strip()]
    return out


def units(text: str) -> list[str]:
    """Table rows and sentences; a sentence ending in ':' right before a table or code block takes it along."""
    parts = blocks(text)
    out: list[str] = []
    for i, block in enumerate(parts):
        if block.startswith(("```", "~~~")):
            continue
        lines = block.splitlines()
        if all(line.lstrip().startswith("|") for line in lines):
            out += lines
            continue
        sentences = SENTENCE_END.split(" ".join(line.strip() for line in lines))
        follower = parts[i + 1] if i + 1 < len(parts) else ""
        if sentences[-1].rstrip().endswith(":") and (follower.startswith(("```", "~~~", "|"))):
            sentences[-1] += "\n" + follower
        out += sentences
    return out


def dated_narrative(text: str) -> list[str]:
    """The units of a page that break the narrative rule (see the module docstring)."""
    bad = []
    for unit in units(text):
        dated = DATE.search(unit) or COMMIT.search(unit)
        if (dated and not FIGURE.search(unit)) or any(p.search(unit) for p in NARRATIVE):
            bad.append(unit)
    return bad


def opening(text: str) -> str:
    """The first block after the page's title ('' when the page starts otherwise)."""
    include = re.match(r'--8<-- "([^"]+)"', text)
    if include:
        text = (ROOT / include.group(1)).read_text(encoding="utf-8")
    parts = blocks(text)
    if not parts or not re.match(r"# \S", parts[0]):
        return ""
    title, _, rest = parts[0].partition("\n")
    return rest if rest.strip() else (parts[1] if len(parts) > 1 else "")


PAGES = {p.relative_to(DOCS).as_posix(): p.read_text(encoding="utf-8") for p in manual_pages()}


def test_the_manual_is_the_pages_outside_results_notes_and_rules() -> None:
    assert "training.md" in PAGES and "tutorials/rllib.md" in PAGES and "game/spaces.md" in PAGES
    assert not any(name.startswith("results/") for name in PAGES)
    assert "development-notes.md" not in PAGES and "rules.md" not in PAGES


def test_the_manual_is_short() -> None:
    total = sum(words(text) for text in PAGES.values())
    assert total <= MAX_TOTAL, f"the manual has {total:,} prose words (at most {MAX_TOTAL:,})"


@pytest.mark.parametrize("name", sorted(PAGES))
def test_no_page_is_long(name: str) -> None:
    n = words(PAGES[name])
    assert n <= MAX_PAGE, f"{name} has {n:,} prose words (at most {MAX_PAGE:,}): split it or cut it"


@pytest.mark.parametrize("name", sorted(PAGES))
def test_each_page_opens_with_a_paragraph_saying_what_it_is_for(name: str) -> None:
    first = opening(PAGES[name])
    assert first, f"{name} does not start with '# Title' and a paragraph"
    assert not re.match(r"\s*(```|~~~|\||[-*] |\d+\. |#|!\[|:::|<!--)", first), (
        f"{name} opens with something other than a paragraph: {first[:60]!r}"
    )
    assert words(first) >= MIN_OPENING, f"{name}'s opening paragraph is too short: {first!r}"


#: Pages read outside the site held to the narrative rule too: the README and the maintainers' guide (the
#: changelog is a record, dated by its headings).
ALSO_NO_NARRATIVE = ("README.md", "CONTRIBUTING.md")


@pytest.mark.parametrize("name", sorted(PAGES) + list(ALSO_NO_NARRATIVE))
def test_no_dated_narrative_in_the_manual(name: str) -> None:
    text = PAGES[name] if name in PAGES else (ROOT / name).read_text(encoding="utf-8")
    bad = dated_narrative(text)
    assert not bad, f"{name}: a date or commit without a figure, or an experiment told:\n" + "\n".join(bad)


def test_the_narrative_rule_catches_what_it_says() -> None:
    assert dated_narrative("Merged on 2026-11-28 after review.")
    assert dated_narrative("Since commit 9666f1c the option is on.")
    assert dated_narrative("Its first 40 minutes made `az` weaker than before.")
    assert dated_narrative("We tried a larger buffer.")
    assert not dated_narrative("Measured 2026-11-28 (commit 9666f1c): 1,154 positions/s on the H200.")
    assert not dated_narrative("| 2026-11-27 | `ppo_2p` | 92.5% |")
    assert not dated_narrative(
        "Measured 2026-11-29 on the 2-core machine:\n\n| a | b |\n|---|---|\n| x | 53 ms |"
    )
    assert not dated_narrative("The decade added 1234567 rows.")  # no hex letter and digit together
    assert words("one two\n\n```python\nx = 1\n```\n\nthree <!-- four -->") == 3


if __name__ == "__main__":
    counts = sorted(((words(text), name) for name, text in PAGES.items()), reverse=True)
    for n, name in counts:
        print(f"{n:6,}  {name}")
    print(
        f"{sum(n for n, _ in counts):6,}  in all ({len(counts)} pages; at most {MAX_TOTAL:,}, {MAX_PAGE:,} a page)"
    )
