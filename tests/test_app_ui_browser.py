"""The table of the browser app as people play it, in headless Chromium via Playwright.

Why apart from ``tests/test_serve_browser.py``: those tests prove whole games are played by
clicking; these pin what a person sees and may not be surprised by: a card or a deck clicked
offers its choices and plays nothing until one is chosen (by mouse and by tap), the other
players' last moves lit and said, words for every phase and every refused pick, a table that
fills a wide window and never scrolls sideways on a phone (replays drawn by the same table), and
pieces that read at a glance (strongholds in their owner's colour, Orient cards whose effect word
fits inside the card on a phone and a wide window, a sacrifice card's cost: the cards it takes, white
cards).
The same browser rules as the other browser tests: the distribution's Chromium, never a download.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import agents
from agents import runner
from splendor_env.cards import ALL_CARD_EFFECT, NUM_CARDS
from splendor_env.picture_layout import EFFECT_TEXT
from splendor_env.records import write_records
from training.app.board import card as card_face
from training.speed.app import (
    GAMES,
    board_move,
    my_turn,
    open_page,
    play_move,
    start,
)

pytestmark = pytest.mark.slow


def legal(page: Any) -> list[dict[str, Any]]:
    return page.evaluate("window.app.view.legal")


def take_until(page: Any, done: Any, turns: int = 12) -> None:
    """Take three gems a turn (the first such take) until ``done(page)`` or ``turns`` turns."""
    for _ in range(turns):
        my_turn(page)
        if done(page):
            return
        moves = legal(page)
        play_move(page, next((m for m in moves if len(m.get("gems", [])) == 3), moves[0]))
    my_turn(page)
    assert done(page), "the position asked for did not come"


def closed(page: Any) -> None:
    page.close()
    page.context.close()


def contrast(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    """WCAG contrast ratio of two sRGB colours."""

    def lum(c: tuple[int, ...]) -> float:
        ch = [x / 255 for x in c[:3]]
        ch = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in ch]
        return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2]

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def rgb(css: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", css)[:3])


# ---- 1. a card or a deck: its choices first, nothing played until one is chosen -----


def test_a_card_or_a_deck_opens_its_choices_and_nothing_is_played_until_one_is_chosen(
    browser: Any, url: str
) -> None:
    for touch in (False, True):  # by mouse, and by tap
        page = open_page(browser, url, (1280, 800), touch=touch)
        press = page.tap if touch else page.click
        start(page, ["human", "greedy"], seed=17)
        deck = next(m for m in legal(page) if m["target"] == "deck-0")
        press("#table #deck-0")
        page.wait_for_selector(f"#menu [data-action='{deck['id']}']")
        assert "Reserve blind" in page.inner_text("#menu")
        page.wait_for_timeout(300)
        assert board_move(page) == "0" and page.evaluate("window.app.view.move") == 0  # nothing played
        press("#menu .cancel")
        assert page.inner_text("#menu") == "" and board_move(page) == "0"
        # a faded card (reserve its only move) says so, and waits too
        faded = page.eval_on_selector("#table .card.unaffordable.legal", "e => e.id")
        press(f"#table #{faded}")
        page.wait_for_selector("#menu .choices")
        assert "cannot pay" in page.inner_text("#menu") and "Reserve" in page.inner_text("#menu")
        page.wait_for_timeout(300)
        assert board_move(page) == "0"
        reserve = next(m for m in legal(page) if m["target"] == faded)
        press(f"#menu [data-action='{reserve['id']}']")  # chosen: now it is played
        page.wait_for_function("document.getElementById('board').dataset.move !== '0'")
        assert page.evaluate("window.app.view.log[0]").startswith("1. player_0 (human): reserve market card")
        assert not page.script_errors
        closed(page)
    # a purchase shows exactly what it pays, gem by gem, before it is made
    page = open_page(browser, url, (1280, 800))
    start(page, ["human", "greedy"], seed=17)
    take_until(page, lambda p: any(m["verb"] == "buy" and m["target"].startswith("slot-") for m in legal(p)))
    buy = next(m for m in legal(page) if m["verb"] == "buy" and m["target"].startswith("slot-"))
    before = board_move(page)
    page.click(f"#table #{buy['target']}")
    button = page.locator(f"#menu [data-action='{buy['id']}']")
    shown = button.locator(".pip").evaluate_all(
        "ps => ps.map(p => [p.className.split(' ')[1], Number(p.textContent)])"
    )
    assert dict(shown) == buy["spends"] and ("pay" in button.inner_text() or not buy["spends"])
    assert board_move(page) == before
    # the same position drawn again (a stream's view, the end of an agent's turn): the choices stay open
    page.evaluate("renderGame(Object.assign({}, window.app.view))")
    assert button.count() == 1 and board_move(page) == before
    button.click()
    page.wait_for_function("b => document.getElementById('board').dataset.move !== b", arg=before)
    assert not page.script_errors
    closed(page)


# ---- 2. the other players' last moves: lit for a moment, said beside their panel ----


def test_the_other_players_last_moves_are_lit_for_a_moment_and_said_beside_their_panels(
    browser: Any, url: str
) -> None:
    page = open_page(browser, url, (1280, 800))
    start(page, ["human", "greedy"], seed=17)
    take = next(m for m in legal(page) if len(m.get("gems", [])) == 3)
    play_move(page, take)
    page.wait_for_function("window.app.view.move >= 2 && window.app.view.legal.length > 0")
    last = page.evaluate("window.app.view.last")
    words = last[1]["words"]
    assert words and all(
        re.match(r"(took|bought|reserved|returned|was visited|claimed|passed)", w) for w in words
    )
    assert page.inner_text("#last-1") == "last: " + ", then ".join(words)
    assert page.locator("#last-0").count() == 0  # your own move is yours to remember
    lit = [m for m in last[1]["marks"] if page.locator(f"#table #{m}").count()]
    assert lit
    for mark in lit:
        assert page.eval_on_selector(
            f"#table #{mark}",
            "e => e.classList.contains('just-moved') && e.getAnimations({ subtree: true }).length > 0",
        )
    page.wait_for_timeout(3_000)  # a moment: then the board is quiet again
    for mark in lit:
        assert page.eval_on_selector(f"#table #{mark}", "e => e.getAnimations({ subtree: true }).length") == 0
    assert page.inner_text("#last-1") == "last: " + ", then ".join(words)  # the words stay
    assert not page.script_errors
    closed(page)


# ---- 3. tokens held, the phase in words, refusals that say why and go ----------------


def test_tokens_held_the_phase_in_words_and_refusals_that_say_why(browser: Any, url: str) -> None:
    page = open_page(browser, url, (1280, 800))
    start(page, ["human", "greedy"], seed=17)
    # a gem stack keeps its colour and its number under the mouse and when focused
    red = "(e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color, e.innerText])"
    plain = page.eval_on_selector("#bank-red", red)
    page.hover("#bank-red")
    assert page.eval_on_selector("#bank-red", red) == plain and rgb(plain[0]) == (200, 48, 44)
    page.focus("#bank-red")
    assert page.eval_on_selector("#bank-red", red) == plain and plain[2].strip().isdigit()
    # an illegal pick is said, not dropped in silence
    page.click("#bank-gold")
    assert "gold" in page.inner_text("#hint") and page.is_disabled("#confirm")
    take = next(m for m in legal(page) if len(m.get("gems", [])) == 3)
    for gem in take["gems"]:
        page.click(f"#bank-{gem}")
    assert page.inner_text("#hint") == ""  # a good pick clears the old word
    other = next(c for c in ("white", "blue", "green", "red", "black") if c not in take["gems"])
    page.click(f"#bank-{other}")
    assert "at most 3" in page.inner_text("#hint")
    assert page.inner_text("#confirm") == "Take " + ", ".join(take["gems"])  # the pick stands
    # a refusal goes at the next action on the board
    page.click("#by-id summary")
    page.fill("#action-id", "9999")
    page.click("#send-id")
    page.wait_for_function("document.getElementById('error').textContent !== ''")
    page.click("#clear")
    assert page.inner_text("#error") == ""
    # tokens held, x/10, for every player; the phase in words; the discard phase says how many
    board = page.evaluate("window.app.view.board")
    for s, p in enumerate(board["players"]):
        assert page.inner_text(f"#held-{s}") == f"{sum(p['tokens'].values())}/10"
    assert page.inner_text("#decision .phase") == board["phase_text"] and "_" not in board["phase_text"]
    take_until(page, lambda p: p.evaluate("window.app.view.phase") == "discard")
    board = page.evaluate("window.app.view.board")
    held = sum(board["players"][0]["tokens"].values())
    assert page.inner_text("#decision .phase").startswith(f"return {held - 10} of {held} tokens")
    assert page.inner_text("#held-0") == f"{held}/10"
    assert ", discard)" not in page.inner_text("#status")  # the engine's name for it, said before
    assert not page.script_errors
    closed(page)
    # a tap leaves no cream stack behind (touch screens have no hover)
    page = open_page(browser, url, (390, 844), touch=True)
    start(page, ["human", "greedy"], seed=17)
    plain = page.eval_on_selector("#bank-red", red)
    page.tap("#bank-red")
    assert page.eval_on_selector("#bank-red", red)[:2] == plain[:2]
    closed(page)


# ---- 4. a table that fills a wide window and fits a phone everywhere -----------------


def sideways(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth > window.innerWidth"))


def width_of(page: Any, selector: str) -> float:
    """The width the elements of ``selector`` cover together (px)."""
    return float(
        page.evaluate(
            """s => { const b = [...document.querySelectorAll(s)].map(e => e.getBoundingClientRect());
            return Math.max(...b.map(r => r.right)) - Math.min(...b.map(r => r.left)); }""",
            selector,
        )
    )


def test_the_table_fills_a_wide_window_and_fits_a_phone_in_every_view(
    browser: Any, url: str, tmp_path: Path
) -> None:
    for game in ("2p", "4p"):
        seats, modules, seed, _ = GAMES[game]
        page = open_page(browser, url, (1280, 800))
        start(page, seats, modules=modules, seed=seed)
        my_turn(page)
        assert width_of(page, "#table") / 1280 >= 0.7, game
        assert width_of(page, "#table [id^=deck-], #table [id^=slot-]") / 1280 >= 0.5, (
            game
        )  # the cards, not only the frame
        assert page.evaluate("document.documentElement.scrollHeight") <= 800 and not sideways(page)
        closed(page)
    page = open_page(browser, url, (390, 844))
    assert not sideways(page), "the start screen"
    for game in ("2p", "4p"):
        seats, modules, seed, _ = GAMES[game]
        start(page, seats, modules=modules, seed=seed)
        my_turn(page)
        assert not sideways(page), game
        page.click("#new-game")  # the start screen opened mid-game
        assert page.is_visible("#seat-0") and not sideways(page), "new game mid-game"
    start(page, ["greedy", "random"], seed=14)  # watching
    page.wait_for_function("Number(document.getElementById('board').dataset.move) >= 2")
    assert not sideways(page), "watching"
    # a replay, drawn by the live table's renderer
    specs = ["greedy", "random"]
    record = runner.play_game([agents.build(s, seed=i) for i, s in enumerate(specs)], 21, labels=specs)
    path = tmp_path / "games.jsonl"
    write_records(path, [record])
    page.click("#new-game")
    page.set_input_files("#record-file", str(path))
    page.click("#open-record")
    page.wait_for_selector("#replay-panel:not(.hidden)")
    page.click("#replay-first")
    page.wait_for_function("document.getElementById('board').dataset.move === '0'")
    page.click("#replay-next")
    page.wait_for_function("document.getElementById('board').dataset.move === '1'")
    assert (
        page.locator("#board svg").count() == 0 and page.locator("#board #table .market .card").count() == 12
    )
    assert page.locator("#last-0").inner_text().startswith("last: ")  # the move stepped to, said
    assert not sideways(page), "replay"
    assert width_of(page, "#table") >= 0.95 * 390 - 20
    assert not page.script_errors
    closed(page)


# ---- 5. pieces that read at a glance ----------------------------------------------------


def test_strongholds_orient_cards_and_white_cards_read_at_a_glance(browser: Any, url: str) -> None:
    seats, modules, seed, _ = GAMES["4p"]
    page = open_page(browser, url, (1280, 800))
    start(page, seats, modules=modules, seed=seed)
    my_turn(page)  # the agents before seat 1 have moved: the board stays as it is now
    # Orient cards say so, wherever they lie
    assert "Orient" in page.inner_text("#table #slot-12")
    assert page.eval_on_selector("#table #slot-12", "e => e.classList.contains('orient-card')")
    # a white card's band stands out from the card
    band, card = page.eval_on_selector(
        "#table .card .band.white",
        "e => [getComputedStyle(e).boxShadow, getComputedStyle(e.closest('.card')).backgroundColor]",
    )  # a white card is in the market at this deal
    assert band != "none" and contrast(rgb(band), rgb(card)) >= 3
    # a stronghold in its owner's colour (the agents place some within a few turns)
    for _ in range(40):
        my_turn(page)
        slots = page.evaluate("window.app.view.board.slots")
        held = [(s["slot"], h["seat"]) for s in slots for h in s.get("strongholds", [])]
        if held:
            break
        moves = legal(page)
        play_move(page, next((m for m in moves if m.get("gems")), moves[0]))
    assert held, "no stronghold placed"
    colours = page.evaluate("window.app.view.board.seat_colours")
    slot, owner = held[0]
    towers = page.eval_on_selector_all(
        f"#table #slot-{slot} .tower", "ts => ts.map(t => getComputedStyle(t).backgroundColor)"
    )
    want = tuple(int(colours[owner][i : i + 2], 16) for i in (1, 3, 5))
    assert towers and rgb(towers[0]) == want
    assert not re.search(r"\bS\d", page.inner_text(f"#table #slot-{slot}"))  # no grey "S0" pill
    assert not page.script_errors
    closed(page)


#: The Orient cards on the table whose words (the card's ``.eff`` line and every part of it) do not fit
#: inside the card: a box past the card's inner edge, its text past it, or a line wider than its box.
UNFIT_ORIENT_WORDS = """() => {
  const unfit = [];
  for (const card of document.querySelectorAll("#table .orient-card")) {
    const c = card.getBoundingClientRect();
    const left = c.left + card.clientLeft, top = c.top + card.clientTop;
    const inner = { left, top, right: left + card.clientWidth, bottom: top + card.clientHeight };
    for (const e of card.querySelectorAll(".eff, .eff *")) {
      const text = document.createRange();
      text.selectNodeContents(e);
      const said = card.id + " '" + e.textContent + "'";
      for (const [what, r] of [["box", e.getBoundingClientRect()], ["text", text.getBoundingClientRect()]]) {
        if (r.left < inner.left - 0.5 || r.right > inner.right + 0.5 || r.top < inner.top - 0.5 ||
            r.bottom > inner.bottom + 0.5) unfit.push(said + ": its " + what + " leaves the card");
      }
      if (e.scrollWidth > e.clientWidth) unfit.push(said + ": wider than its box");
    }
  }
  return unfit;
}"""


def test_every_orient_effect_word_fits_inside_its_card_on_a_phone_and_a_wide_window(
    browser: Any, url: str
) -> None:
    # one Orient card of every effect (the six fill the Orient market) and one with none, as the server draws them
    first: dict[int, int] = {}
    for c in range(NUM_CARDS, len(ALL_CARD_EFFECT)):
        first.setdefault(int(ALL_CARD_EFFECT[c]), c)
    faces = [card_face(c) for _, c in sorted(first.items(), key=lambda ec: (ec[0] == 0, ec[0]))]
    assert {f["effect_text"] for f in faces} == {None, *EFFECT_TEXT.values()}
    seats, modules, seed, _ = GAMES["4p"]
    for size in ((390, 844), (1280, 800)):
        page = open_page(browser, url, size)
        start(page, seats, modules=modules, seed=seed)
        my_turn(page)
        # the cards dealt: the Orient market, two cards a level
        assert page.locator("#table .orient-card .eff").count() >= 6
        assert page.evaluate(UNFIT_ORIENT_WORDS) == [], size
        # every effect word, in the Orient market and in a hand of reserved cards (drawn smaller)
        page.evaluate(
            """faces => { const v = JSON.parse(JSON.stringify(window.app.view));
            v.board.slots.filter((s) => s.orient).forEach((s, i) => { s.card = faces[i % faces.length]; });
            v.board.players.forEach((p, s) => {
              p.reserved = faces.slice(s * 2 % faces.length).concat(faces).slice(0, 3).map((card) => ({ card, blind: false }));
            });
            renderGame(v); }""",
            faces,
        )
        shown = page.locator("#table .orient-card .eff").all_inner_texts()
        assert all(any(f["effect_text"] in t for t in shown) for f in faces if f["effect_text"]), shown
        assert page.evaluate(UNFIT_ORIENT_WORDS) == [], size
        assert not sideways(page) and not page.script_errors
        if size[0] == 1280:
            assert width_of(page, "#table") / 1280 >= 0.7
        closed(page)


#: A sacrifice card's cost area as the page draws it: per card, the pip's text, colour, font size (px),
#: and whether the pip lies inside the card with its text inside the pip.
SACRIFICE_COSTS = """() => [...document.querySelectorAll("#table .card")].filter((c) => c.querySelector(".cost .sac")).map((card) => {
  const pip = card.querySelector(".cost .sac"), c = card.getBoundingClientRect(), r = pip.getBoundingClientRect();
  const left = c.left + card.clientLeft, top = c.top + card.clientTop;
  const inside = r.left >= left - 0.5 && r.right <= left + card.clientWidth + 0.5 && r.top >= top - 0.5 &&
    r.bottom <= top + card.clientHeight + 0.5 && pip.scrollWidth <= pip.clientWidth;
  return { id: card.id, text: pip.textContent, colour: GEMS.find((g) => pip.classList.contains(g)) || null,
    font: parseFloat(getComputedStyle(pip).fontSize), inside, title: card.title };
})"""


def test_a_sacrifice_card_shows_the_cards_it_takes_and_its_choices_say_what_buying_it_sacrifices(
    browser: Any, url: str
) -> None:
    # A sacrifice card has no token cost: its cost area shows the cards it takes ("-2" on a card of the
    # colour), readable inside the card on a phone and a wide window; its menu says what buying it takes.
    seats, modules, seed, _ = GAMES["4p"]  # the deal puts a sacrifice card in the Orient level-3 row
    for size in ((390, 844), (1280, 800)):
        page = open_page(browser, url, size)
        start(page, seats, modules=modules, seed=seed)
        my_turn(page)
        view = page.evaluate("window.app.view")
        slot = next(s for s in view["board"]["slots"] if s["card"] and s["card"]["effect"] == "sacrifice")
        sac = slot["card"]["sacrifice"]
        assert sac and sac["count"] == 2, slot  # the server names what the card takes
        element = f"slot-{slot['slot']}"
        drawn = {d["id"]: d for d in page.evaluate(SACRIFICE_COSTS)}
        assert element in drawn, f"{size}: the sacrifice card's cost area is empty"
        shown = drawn[element]
        assert shown["text"] == f"\u2212{sac['count']}" and shown["colour"] == sac["colour"], shown
        assert shown["inside"] and shown["font"] >= 11, (size, shown)
        assert f"sacrificing {sac['count']} of your {sac['colour']} cards" in shown["title"]
        assert page.evaluate(UNFIT_ORIENT_WORDS) == [], size
        # its choices: not buyable yet (no card of that colour), and why
        held = view["board"]["players"][view["shown_seat"]]["cards_held"][sac["colour"]]
        page.click(f"#table #{element}")
        page.wait_for_selector("#menu .choices")
        note = page.inner_text("#menu .sacrifice-note")
        assert f"cannot buy it now: it takes {sac['count']} {sac['colour']} cards and you hold {held}" in note
        assert "cannot pay" not in page.inner_text("#menu"), note
        page.click("#menu .cancel")
        # the seat holding three cards of that colour, the purchase offered: the menu says what it sacrifices
        buy = {"id": 0, "text": "buy it", "target": element, "verb": "buy", "spends": {}}
        page.evaluate(
            """([buy, colour]) => { const v = JSON.parse(JSON.stringify(window.app.view));
            v.board.players[v.shown_seat].cards_held[colour] = 3;
            v.legal = v.legal.concat([buy]); renderGame(v); }""",
            [buy, sac["colour"]],
        )
        page.click(f"#table #{element}")
        page.wait_for_selector("#menu .choices")
        note = page.inner_text("#menu .sacrifice-note")
        assert f"sacrifices {sac['count']} of your 3 {sac['colour']} cards: you choose which" in note, note
        label = page.locator("#menu [data-action='0']")
        assert "sacrifice" in label.inner_text() and "free" not in label.inner_text()
        assert label.locator(f".pip.sac.{sac['colour']}").inner_text() == f"\u2212{sac['count']}"
        assert not sideways(page) and not page.script_errors
        closed(page)
