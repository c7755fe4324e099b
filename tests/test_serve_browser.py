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
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agents
from agents import runner
from splendor_env.records import write_records
from tests.helpers.app_server import free_port, server_process
from training.common.cli import CliError
from training.speed.app import (
    GAMES,
    SIZES,
    SIZES_2P,
    board_move,
    click_move,
    click_timings,
    describe,
    my_turn,
    open_page,
    over,
    play_by_clicking,
    play_move,
    start,
)

pytestmark = pytest.mark.slow


#: Where the tests write their screenshots (the docs' come from a run with this set to docs/img).
SHOTS = os.environ.get("SPLENDOR_APP_SCREENSHOTS")


@pytest.fixture
def page(browser: Any, url: str) -> Iterator[Any]:
    page = open_page(browser, url, (1600, 1000))
    try:
        yield page
    finally:
        page.context.close()
    assert not page.script_errors, f"the page's JavaScript failed: {page.script_errors}"


def shoot(page: Any, name: str, tmp_path: Path) -> Path:
    folder = Path(SHOTS) if SHOTS else tmp_path
    path = folder / f"app-{name}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000
    return path


@pytest.mark.parametrize("size", list(SIZES_2P))
def test_a_two_player_base_game_is_played_by_clicking_the_board(browser: Any, url: str, size: str) -> None:
    """A whole game by clicks; how fast the page answers is ``python -m training.speed.app``'s to measure."""
    seats, modules, seed, click_seed = GAMES["2p"]
    page = open_page(browser, url, SIZES_2P[size])
    start(page, seats, modules=modules, seed=seed)
    wide = size == "1280x800"
    clicks = play_by_clicking(page, random.Random(click_seed), fits=SIZES_2P[size] if wide else None)
    print(f"\n2-player game vs greedy at {size}: {clicks} moves; {describe(click_timings(page))}")
    assert "Game over" in page.inner_text("#status") or "turn cap" in page.inner_text("#status")
    assert page.locator("#table [data-action]").count() == 0 and page.is_visible("#download")
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES_2P[size][0]  # never sideways
    assert len(page.evaluate("window.app.timings")) == clicks  # the page timed every move it was clicked
    assert not page.script_errors
    if wide:  # the game just played replays on the page, from its own record
        moves = page.evaluate("window.app.view.move")
        page.click("#replay-this")
        page.wait_for_selector("#replay-panel:not(.hidden)")
        assert page.inner_text("#replay-move") == f"{moves} / {moves}"
    page.context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_a_four_player_game_with_every_module_is_played_by_clicking_the_board(
    browser: Any, url: str, size: str, tmp_path: Path
) -> None:
    seats, modules, seed, click_seed = GAMES["4p"]
    page = open_page(browser, url, SIZES[size])
    start(page, seats, modules=modules, seed=seed)
    rng = random.Random(click_seed)
    for _ in range(6):  # a few moves in, so that the screenshot shows cards and tokens in hand
        my_turn(page)
        legal = page.evaluate("window.app.view.legal")
        play_move(page, next((m for m in legal if m.get("gems")), legal[0]))
    my_turn(page)
    shoot(page, size, tmp_path)
    wide = size == "1280x800"
    clicks = play_by_clicking(page, rng, fits=SIZES[size] if wide else None)
    print(f"\n4-player game, all modules, at {size}: {clicks} moves; {describe(click_timings(page))}")
    assert page.evaluate("window.app.view.modules") == list(modules) and over(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size][0]
    assert not page.script_errors
    page.context.close()


def test_a_take_is_picked_on_the_stacks_and_shown_before_it_is_confirmed(page: Any) -> None:
    start(page, ["human", "greedy"], seed=17)
    take = next(m for m in page.evaluate("window.app.view.legal") if len(m.get("gems", [])) == 3)
    page.click(f"#bank-{take['gems'][0]}")
    page.click(f"#bank-{take['gems'][1]}")
    assert (
        page.is_disabled("#confirm") and board_move(page) == "0"
    )  # nothing is played before the pick is whole
    page.click(f"#bank-{take['gems'][2]}")
    assert page.inner_text("#confirm") == "Take " + ", ".join(take["gems"])
    assert page.locator("#bank-gold[data-action]").count() == 0  # gold is never taken: not a target
    assert page.locator("#moves-box").get_attribute("open") is None  # the moves in words stay folded away
    page.click("#clear")
    assert page.is_disabled("#confirm") and page.inner_text("#confirm") == "Take"
    # A card with one move (reserve) offers it, and plays it once chosen; the take picked before is dropped.
    card = next(m for m in page.evaluate("window.app.view.legal") if m["verb"] == "reserve")
    page.click(f"#table #{card['target']}")
    page.click(f"#menu [data-action='{card['id']}']")
    page.wait_for_function("document.getElementById('board').dataset.move !== '0'")
    assert page.evaluate("window.app.view.log[0]").startswith("1. player_0 (human): reserve market card")


def test_agents_are_watched_at_the_chosen_speed(page: Any) -> None:
    """Watch mode is server push: the page sets the pace once, then only listens to the stream."""
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.eval_on_selector("#speed", "e => { e.value = '0'; e.dispatchEvent(new Event('input')); }")
    start(page, ["greedy", "random"], seed=14)
    assert page.locator("#table [data-action]").count() == 0
    page.wait_for_function("document.getElementById('status').dataset.over === 'true'", timeout=90_000)
    record = page.evaluate("window.app.view.record")
    assert record["agents"] == ["greedy", "random"] and board_move(page) == str(len(record["actions"]))
    game_id = page.evaluate("window.app.view.game_id")
    assert [u.split("/api/")[1] for u in posts] == ["games", f"games/{game_id}/pace"], posts
    page.click("#pause")  # pausing a finished game changes nothing
    assert page.get_attribute("#status", "data-over") == "true"


def test_pause_stops_a_watched_game_for_every_page_and_resume_goes_on(page: Any, browser: Any) -> None:
    page.eval_on_selector("#speed", "e => { e.value = '150'; e.dispatchEvent(new Event('input')); }")
    start(page, ["greedy", "random"], seed=19)
    page.wait_for_function("Number(document.getElementById('board').dataset.move) >= 2")
    other = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    other.goto(page.url)  # a second page watching: the same pace, not twice as fast
    other.wait_for_selector("body[data-ready=true]")
    assert other.input_value("#speed") == "150"
    page.click("#pause")
    page.wait_for_function("document.getElementById('pause').textContent === 'Resume'")
    other.wait_for_function("document.getElementById('pause').textContent === 'Resume'")
    page.wait_for_timeout(400)  # a move under way ends
    stopped = board_move(page)
    page.wait_for_timeout(800)
    assert (
        board_move(page) == stopped
        and board_move(other) == stopped
        and "(paused)" in page.inner_text("#status")
    )
    other.click("#pause")  # either page resumes it
    page.wait_for_function(
        "before => Number(document.getElementById('board').dataset.move) > Number(before)", arg=stopped
    )
    assert page.inner_text("#pause") == "Pause"
    other.context.close()


def test_a_move_answered_late_does_not_drop_the_next_click(page: Any) -> None:
    """The live stream may show the agents' answer before the request that sent the move returns
    (a loaded machine, a slow network): the board is live again then, and the next click plays."""
    held: list[Any] = []

    def hold(route: Any) -> None:  # the move reaches the server; its answer waits here
        held.append((route, route.fetch()))

    start(page, ["human", "greedy"], seed=17)
    page.route("**/api/games/*/move", hold)
    for _ in range(2):
        my_turn(page)
        play_move(page, page.evaluate("window.app.view.legal")[0])
    page.wait_for_function("Number(document.getElementById('board').dataset.move) >= 4")
    assert len(held) == 2  # both moves were sent while their answers were held
    for route, response in held:  # the old answers arrive at last and change nothing
        route.fulfill(response=response)
    page.unroute("**/api/games/*/move")
    page.wait_for_timeout(200)
    assert page.inner_text("#error") == "" and int(board_move(page)) >= 4


def test_a_refused_move_leaves_the_game_unchanged(page: Any) -> None:
    start(page, ["human", "greedy"], seed=13)
    svg, move = page.inner_html("#board"), board_move(page)
    pieces = "es => es.map(e => e.id + ':' + e.dataset.action)"
    armed = page.eval_on_selector_all("#table [data-action]", pieces)
    legal = {m["id"] for m in page.evaluate("window.app.view.legal")}
    assert legal == {
        int(a) for a in page.eval_on_selector_all("#moves button", "bs => bs.map(b => b.dataset.action)")
    }
    illegal = next(a for a in range(200) if a not in legal)
    page.click("#by-id summary")
    page.fill("#action-id", str(illegal))
    page.click("#send-id")
    page.wait_for_function("document.getElementById('error').textContent !== ''")
    assert "refused" in page.inner_text("#error")
    assert page.inner_html("#board") == svg and board_move(page) == move
    assert page.eval_on_selector_all("#table [data-action]", pieces) == armed
    # The game goes on from the same position: a legal click is played and clears the error.
    play_move(page, page.evaluate("window.app.view.legal")[0])
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
    for _ in range(3):  # quick steps, each sent before the last one's answer: they add up
        page.click("#replay-next")
    page.wait_for_function("document.getElementById('board').dataset.move === '5'")
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
    my_turn(page)
    assert int(board_move(page)) >= 10 and page.evaluate("window.app.view.my_seats") == [1]


def test_a_game_is_a_url_that_survives_a_reload_and_is_watched_elsewhere(page: Any, browser: Any) -> None:
    start(page, ["human", "greedy"], seed=15)
    click_move(page, page.evaluate("window.app.view.legal")[0])
    page.wait_for_function("document.getElementById('board').dataset.move !== '0'")
    my_turn(page)
    game_id = page.evaluate("window.app.view.game_id")
    assert page.url.endswith(f"/games/{game_id}") and not page.is_visible("#seat-0")  # the setup folds away
    pieces = "es => es.map(e => e.id + ':' + e.dataset.action)"
    move, armed = board_move(page), page.eval_on_selector_all("#table [data-action]", pieces)
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    my_turn(page)
    assert board_move(page) == move and page.eval_on_selector_all("#table [data-action]", pieces) == armed
    # Another browser (no seat token) watches the same game live: no moves, and the board follows.
    other = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    other.goto(page.url)
    other.wait_for_function(f"document.getElementById('board').dataset.move === '{move}'")
    assert other.locator("#table [data-action]").count() == 0
    click_move(page, page.evaluate("window.app.view.legal")[0])
    other.wait_for_function(
        "before => Number(document.getElementById('board').dataset.move) > Number(before)", arg=move
    )
    other.context.close()


def test_a_page_reconnects_by_itself_after_the_server_is_killed_and_play_goes_on(
    browser: Any, tmp_path: Path
) -> None:
    """``kill -9`` mid-game, start again on the same port: both pages say they are reconnecting, come
    back within 5 s of the restart at the same position, and the game goes on by clicking."""
    data, port = tmp_path / "data", free_port()
    url = f"http://127.0.0.1:{port}/"
    with server_process(data, port) as first:
        page = open_page(browser, url, (1280, 800))
        start(page, ["human", "greedy"], seed=22)
        play_move(page, page.evaluate("window.app.view.legal")[0])
        my_turn(page)
        other = open_page(browser, page.url, (1280, 800))  # a second browser, watching
        move = board_move(page)
        other.wait_for_function(f"document.getElementById('board').dataset.move === '{move}'")
        pieces = "es => es.map(e => e.id + ':' + e.dataset.action)"
        armed = page.eval_on_selector_all("#table [data-action]", pieces)
        first.kill()
        first.wait(timeout=30)
    for p in (page, other):
        p.wait_for_selector("#reconnecting:not(.hidden)", timeout=10_000)
    assert "reconnecting" in page.inner_text("#reconnecting")
    with server_process(data, port):
        restarted = time.monotonic()
        for p in (page, other):
            p.wait_for_function("window.app.reconnects >= 1", timeout=5_000)
        print(f"\nboth pages back {time.monotonic() - restarted:.2f} s after the restart")
        for p in (page, other):
            assert (
                not p.is_visible("#reconnecting") and board_move(p) == move and p.inner_text("#error") == ""
            )
        assert page.eval_on_selector_all("#table [data-action]", pieces) == armed
        assert other.locator("#table [data-action]").count() == 0  # still only watching
        play_move(page, page.evaluate("window.app.view.legal")[0])
        my_turn(page)
        other.wait_for_function(
            "before => Number(document.getElementById('board').dataset.move) > Number(before)", arg=move
        )
        game_id = page.evaluate("window.app.view.game_id")
        lobby = open_page(browser, url + "lobby", (1280, 800))  # the lobby lists it, linked to its page
        row = lobby.locator(f"#games tr[data-game='{game_id}']")
        assert row.get_attribute("data-over") == "false" and "human vs greedy" in row.inner_text()
        assert row.locator("a").first.get_attribute("href") == f"/games/{game_id}"
        for p in (page, other, lobby):
            assert not p.script_errors, p.script_errors
            p.context.close()


def test_the_page_says_which_agent_is_thinking_and_takes_no_input_meanwhile(page: Any) -> None:
    start(page, ["human", "mcts:ms=1500"], seed=16)
    click_move(page, page.evaluate("window.app.view.legal")[0])
    page.wait_for_selector("#status[data-thinking=true]")
    assert "mcts:ms=1500 (player_1) is thinking" in page.inner_text("#status")
    assert page.locator("#table [data-action]").count() == 0
    page.wait_for_selector("#table [data-action]", timeout=60_000)
    assert page.get_attribute("#status", "data-thinking") == "false" and "your move" in page.inner_text(
        "#status"
    )


def test_two_browsers_each_play_their_seat_by_its_link(page: Any, browser: Any) -> None:
    start(page, ["human", "human"], seed=18)
    link = page.get_attribute("#seat-links a:nth-of-type(2)", "href")
    assert "seat=1&token=" in link
    other = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    other.goto(link)
    other.wait_for_selector("body[data-ready=true]")
    assert "token" not in other.url  # the secret leaves the address bar
    assert other.locator("#table [data-action]").count() == 0  # player_0 is on move, at the first browser
    # The first browser holds both seats (hot-seat); it plays player_0, the second browser then player_1.
    click_move(page, page.evaluate("window.app.view.legal")[0])
    other.wait_for_selector("#table [data-action]")
    assert other.evaluate("window.app.view.my_seats") == [1]
    click_move(other, other.evaluate("window.app.view.legal")[0])
    page.wait_for_function("document.getElementById('board').dataset.move === '2'")
    other.context.close()


def test_the_click_benchmark_plays_a_game_and_prints_its_figures(
    browser: Any, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m training.speed.app``: the speed figures come from a script, not from a timed test."""
    from training.speed import app as speed_app

    (row,) = speed_app.run_benchmark(browser, url, ["2p", "4p"], ["768x1024"])  # 4p: not at this size
    assert row["game"] == "2p" and row["moves"] > 10 and 0 < row["median_ms"] <= row["max_ms"]
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("2p at 768x1024: "))
    assert "moves in" in line and "click to updated board median" in line
    assert "slowest median click to board" in out
    with pytest.raises(CliError, match="--sizes: unknown"):
        speed_app.main(["--sizes", "1x1"])
