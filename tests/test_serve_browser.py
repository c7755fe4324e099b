"""The browser app in a real browser: headless Chromium (the distribution's ``/usr/bin/chromium``) via Playwright.

Why a real browser: the API tests prove the server; only a browser proves the
page (its JavaScript, the SVG it shows, the buttons it builds from the legal
moves) is usable, by clicking as a person would: whole games, a record
stepped to its last move, a refused move that leaves the board as it was.

Chromium is never downloaded (no ``playwright install``): ``apt-get install -y
chromium`` provides it and ``.ci/run`` installs it. Under CI (``CI=1``) a
missing browser or Playwright fails these tests loudly; on a developer machine
without them they skip, saying why.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agents
from agents import runner
from splendor_env.records import write_records
from tests.helpers.app_server import app_server

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Targets (the issue): a click answered in under 100 ms with greedy opponents; the two games under 2 minutes.
MOVE_MS_TARGET = 100.0
GAMES_S_TARGET = 120.0
_elapsed: dict[str, float] = {}


def _missing() -> str | None:
    """Why the browser tests cannot run here, or ``None``."""
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is missing (apt-get install -y chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is missing (pip install -e '.[app]')"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI") == "1":
            pytest.fail(f"the browser tests must run in CI: {reason}")
        pytest.skip(f"browser tests skipped: {reason}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with app_server() as base:
        yield base


@pytest.fixture
def page(browser: Any, url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = context.new_page()
    script_errors: list[str] = []
    page.on("pageerror", lambda exc: script_errors.append(str(exc)))
    page.set_default_timeout(30_000)
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")
    try:
        yield page
    finally:
        context.close()
    assert not script_errors, f"the page's JavaScript failed: {script_errors}"


def start(page: Any, seats: list[str], modules: tuple[str, ...] = (), seed: int = 0) -> None:
    for i in range(4):
        page.fill(f"#seat-{i}", seats[i] if i < len(seats) else "")
    for m in modules:
        page.check(f"#module-{m}")
    page.fill("#seed", str(seed))
    page.click("#start")
    page.wait_for_function("window.app.view !== null && window.app.mode === 'game'")


def board_move(page: Any) -> str:
    return page.get_attribute("#board", "data-move")


def over(page: Any) -> bool:
    return page.get_attribute("#status", "data-over") == "true"


def play_by_clicking(page: Any, rng: random.Random) -> int:
    """Click moves until the game ends: a purchase when there is one, else any move; returns the clicks."""
    clicks = 0
    while not over(page):
        page.wait_for_selector("#moves button:not([disabled]), #status[data-over=true]")
        if over(page):
            break
        texts = page.locator("#moves button").all_inner_texts()
        buys = [i for i, t in enumerate(texts) if t.startswith("buy")]
        choice = buys[0] if buys else rng.randrange(len(texts))
        before = board_move(page)
        page.locator("#moves button").nth(choice).click()
        page.wait_for_function(
            "before => document.getElementById('board').dataset.move !== before", arg=before
        )
        clicks += 1
        assert page.inner_text("#error") == ""
    return clicks


def test_a_two_player_game_is_played_by_clicking(page: Any) -> None:
    start(page, ["human", "greedy"], seed=11)
    t0 = time.perf_counter()
    clicks = play_by_clicking(page, random.Random(1))
    _elapsed["2p"] = time.perf_counter() - t0
    timings = page.evaluate("window.app.timings")
    median, worst = statistics.median(timings), max(timings)
    print(
        f"\n2-player game vs greedy: {clicks} clicks in {_elapsed['2p']:.1f} s; click to updated board: "
        f"median {median:.1f} ms, p90 {statistics.quantiles(timings, n=10)[-1]:.1f} ms, max {worst:.1f} ms"
    )
    assert "Game over" in page.inner_text("#status") or "turn cap" in page.inner_text("#status")
    assert page.locator("#moves button").count() == 0
    assert page.is_visible("#download")
    assert median < MOVE_MS_TARGET, timings
    # The game just played replays on the page, from its own record.
    moves = page.evaluate("window.app.view.move")
    page.click("#replay-this")
    page.wait_for_selector("#replay-panel:not(.hidden)")
    assert page.inner_text("#replay-move") == f"{moves} / {moves}"


def test_agents_are_watched_at_the_chosen_speed(page: Any) -> None:
    page.eval_on_selector("#speed", "e => { e.value = '0'; e.dispatchEvent(new Event('input')); }")
    start(page, ["greedy", "random"], seed=14)
    assert page.locator("#moves button").count() == 0
    page.wait_for_function("document.getElementById('status').dataset.over === 'true'", timeout=90_000)
    record = page.evaluate("window.app.view.record")
    assert record["agents"] == ["greedy", "random"] and board_move(page) == str(len(record["actions"]))
    page.click("#pause")  # pausing a finished game changes nothing
    assert page.get_attribute("#status", "data-over") == "true"


def test_a_three_player_module_game_is_played_by_clicking(page: Any) -> None:
    modules = ("cities", "trading_posts", "orient", "strongholds")
    start(page, ["greedy", "human", "random"], modules=modules, seed=12)
    t0 = time.perf_counter()
    clicks = play_by_clicking(page, random.Random(2))
    _elapsed["3p"] = time.perf_counter() - t0
    total = sum(_elapsed.values())
    median = statistics.median(page.evaluate("window.app.timings"))
    print(
        f"\n3-player game vs greedy and random, all modules: {clicks} clicks in {_elapsed['3p']:.1f} s "
        f"(click to updated board: median {median:.1f} ms); both games {total:.1f} s"
    )
    assert page.evaluate("window.app.view.modules") == list(modules)
    assert total < GAMES_S_TARGET


def test_a_refused_move_leaves_the_game_unchanged(page: Any) -> None:
    start(page, ["human", "greedy"], seed=13)
    svg, move = page.inner_html("#board"), board_move(page)
    buttons = page.locator("#moves button").all_inner_texts()
    legal = {
        int(a) for a in page.eval_on_selector_all("#moves button", "bs => bs.map(b => b.dataset.action)")
    }
    illegal = next(a for a in range(200) if a not in legal)
    page.click("#by-id summary")
    page.fill("#action-id", str(illegal))
    page.click("#send-id")
    page.wait_for_function("document.getElementById('error').textContent !== ''")
    assert "refused" in page.inner_text("#error")
    assert page.inner_html("#board") == svg and board_move(page) == move
    assert page.locator("#moves button").all_inner_texts() == buttons
    # The game goes on from the same position: a legal click is played and clears the error.
    page.locator("#moves button").first.click()
    page.wait_for_function("before => document.getElementById('board').dataset.move !== before", arg=move)
    assert page.inner_text("#error") == ""
    # A bad agent spec is said on the page too.
    page.click("#new-game")
    page.fill("#seat-1", "grredy")
    page.click("#start")
    page.wait_for_function("document.getElementById('error').textContent !== ''")
    assert "unknown agent spec 'grredy'" in page.inner_text("#error")


def test_a_record_is_replayed_to_its_last_move_and_continued(page: Any, tmp_path: Path) -> None:
    specs = ["greedy", "random"]
    record = runner.play_game([agents.build(s, seed=i) for i, s in enumerate(specs)], 21, labels=specs)
    path = tmp_path / "games.jsonl"
    write_records(path, [record])
    n = len(record["actions"])
    page.set_input_files("#record-file", str(path))
    page.click("#open-record")
    page.wait_for_selector("#replay-panel:not(.hidden)")
    page.click("#replay-first")
    page.wait_for_function("document.getElementById('board').dataset.move === '0'")
    for k in (1, 2, 3):
        page.click("#replay-next")
        page.wait_for_function(f"document.getElementById('board').dataset.move === '{k}'")
    page.click("#replay-prev")
    page.wait_for_function("document.getElementById('board').dataset.move === '2'")
    page.click("#replay-last")
    page.wait_for_function(f"document.getElementById('board').dataset.move === '{n}'")
    assert page.inner_text("#replay-move") == f"{n} / {n}"
    assert page.get_attribute("#status", "data-over") == "true"
    assert page.is_disabled("#continue")
    # The slider, then continue playing from move 10 as seat 1.
    page.eval_on_selector("#replay-slider", "e => { e.value = '10'; e.dispatchEvent(new Event('change')); }")
    page.wait_for_function("document.getElementById('board').dataset.move === '10'")
    assert page.input_value("#seat-0") == "greedy" and page.input_value("#seat-1") == "random"
    page.fill("#seat-1", "human")
    page.click("#continue")
    page.wait_for_function("window.app.mode === 'game'")
    page.wait_for_selector("#moves button")
    assert int(board_move(page)) >= 10 and page.evaluate("window.app.view.my_seats") == [1]


def test_a_game_is_a_url_that_survives_a_reload_and_is_watched_elsewhere(page: Any, browser: Any) -> None:
    start(page, ["human", "greedy"], seed=15)
    page.locator("#moves button").first.click()
    page.wait_for_selector("#moves button:not([disabled])")
    game_id = page.evaluate("window.app.view.game_id")
    assert page.url.endswith(f"/games/{game_id}") and not page.is_visible("#seat-0")  # the setup folds away
    move, moves = board_move(page), page.locator("#moves button").all_inner_texts()
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_selector("#moves button")
    assert board_move(page) == move and page.locator("#moves button").all_inner_texts() == moves
    # Another browser (no seat token) watches the same game live: no moves, and the board follows.
    other = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    other.goto(page.url)
    other.wait_for_function(f"document.getElementById('board').dataset.move === '{move}'")
    assert other.locator("#moves button").count() == 0
    page.locator("#moves button").first.click()
    other.wait_for_function(
        "before => Number(document.getElementById('board').dataset.move) > Number(before)", arg=move
    )
    other.context.close()


def test_the_page_says_which_agent_is_thinking_and_takes_no_input_meanwhile(page: Any) -> None:
    start(page, ["human", "mcts:sims=400"], seed=16)
    page.locator("#moves button").first.click()
    page.wait_for_selector("#status[data-thinking=true]")
    assert "mcts:sims=400 (player_1) is thinking" in page.inner_text("#status")
    assert page.locator("#moves button").count() == 0
    page.wait_for_selector("#moves button:not([disabled])", timeout=60_000)
    assert page.get_attribute("#status", "data-thinking") == "false" and "your move" in page.inner_text(
        "#status"
    )
