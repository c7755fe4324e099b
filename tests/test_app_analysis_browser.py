"""The analysis view on the page (``training/app/web/analysis.js``) in headless Chromium, as a person uses it.

Why a browser: the API tests prove the answers; only the page proves the view is off until asked for,
then shows a win-chance bar per player and az's three moves for the position on screen, follows the
game and the replay, and keeps the toggle across a reload. Chromium is the distribution's, never a
downloaded one (as in ``tests/test_serve_browser.py``, which skips or fails the same way).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agents
from agents import runner
from splendor_env.records import write_records
from training.speed.app import my_turn, open_page, play_move, start

pytestmark = pytest.mark.slow

READY = "#analysis-body[data-state=ready]"


@pytest.fixture
def page(browser: Any, url: str) -> Iterator[Any]:
    page = open_page(browser, url, (1600, 1000))
    page.analysis_asked = []
    page.on("request", lambda r: page.analysis_asked.append(r.url) if "/analysis" in r.url else None)
    try:
        yield page
    finally:
        page.context.close()
    assert not page.script_errors, f"the page's JavaScript failed: {page.script_errors}"


def shown_key(page: Any) -> str:
    return page.get_attribute(READY, "data-key")


def test_the_analysis_is_off_by_default_and_on_shows_chances_and_three_moves(page: Any) -> None:
    start(page, ["human", "greedy"], seed=3)
    my_turn(page)
    assert not page.is_checked("#analysis-toggle")
    assert page.locator(".analysis-bar").count() == 0 and not page.analysis_asked  # off: nothing asked
    game_id = page.evaluate("window.app.view.game_id")
    page.check("#analysis-toggle")
    page.wait_for_selector(READY)
    assert shown_key(page) == f"game:{game_id}:0"
    bars = page.locator(".analysis-bar")
    assert bars.count() == 2
    chances = [int(bars.nth(p).locator(".analysis-pct").inner_text().rstrip("%")) for p in range(2)]
    assert abs(sum(chances) - 100) <= 1
    moves = page.locator(".analysis-move")
    assert moves.count() == 3
    legal = {m["id"]: m["text"] for m in page.evaluate("window.app.view.legal")}
    for k in range(3):  # each a legal move, named as the table names it, with its visit share
        item = moves.nth(k)
        assert legal[int(item.get_attribute("data-action"))] in item.inner_text()
        assert item.locator(".analysis-share").inner_text().endswith("%")
    assert "player_0's information only" in page.inner_text("#analysis-body")
    # the view follows the game: after a move and greedy's answer, the new position is analysed
    play_move(page, page.evaluate("window.app.view.legal")[0])
    my_turn(page)
    move = page.evaluate("window.app.view.move")
    page.wait_for_function(
        f"document.querySelector('{READY}')?.dataset.key === 'game:{game_id}:{move}'", timeout=60_000
    )
    # kept by this browser: on after a reload, off once unticked
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    assert page.is_checked("#analysis-toggle")
    page.wait_for_selector(READY)
    page.uncheck("#analysis-toggle")
    assert (
        not page.is_visible("#analysis-body") and page.get_attribute("#analysis-body", "data-state") == "off"
    )


def test_a_replayed_position_is_analysed_from_public_information(page: Any, tmp_path: Path) -> None:
    specs = ["greedy", "random"]
    record = runner.play_game([agents.build(s, seed=i) for i, s in enumerate(specs)], 21, labels=specs)
    path = tmp_path / "games.jsonl"
    write_records(path, [record])
    page.evaluate("localStorage.setItem('splendor-analysis', 'on')")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.set_input_files("#record-file", str(path))
    page.click("#open-record")
    page.wait_for_selector("#replay-panel:not(.hidden)")
    page.click("#replay-first")
    page.click("#replay-next")
    replay_id = page.evaluate("window.app.replay.replay_id")
    page.wait_for_function(f"document.querySelector('{READY}')?.dataset.key === 'replay:{replay_id}:1'")
    assert page.locator(".analysis-bar").count() == 2 and page.locator(".analysis-move").count() >= 1
    assert "public information only" in page.inner_text("#analysis-body")
    page.click("#replay-last")
    page.wait_for_selector("#analysis-body[data-state=error]")
    assert "over" in page.inner_text("#analysis-body")
