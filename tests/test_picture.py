"""Board pictures (splendor_env.picture): rgb_array, SVG and PNG of one layout, hidden cards, game videos."""

from __future__ import annotations

import ast
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import render_test

from agents.gym_view import SplendorGymEnv
from splendor_env import env as make_env
from splendor_env import picture, picture_layout, raw_env, records
from splendor_env.cards import NUM_CARDS
from splendor_env.snapshot import to_dict
from splendor_env.state import MODULE_NAMES
from tests.helpers import Position, play, reserve_deck
from training.records import main as records_main

PIL = pytest.importorskip("PIL", reason="the render extra (Pillow) draws the images")

ROOT = Path(__file__).resolve().parents[1]
COMBINATIONS = [(), *((m,) for m in MODULE_NAMES), MODULE_NAMES]
ALL = MODULE_NAMES


def played(num_players: int, modules: tuple[str, ...], moves: int, seed: int = 0, **kw) -> raw_env:
    """A raw env after ``moves`` random legal decisions from the deal of ``seed``."""
    e = raw_env(num_players=num_players, modules=modules, **kw)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        if e.terminations[e.agent_selection] or e.truncations[e.agent_selection]:
            break
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    return e


@pytest.mark.parametrize("modules", COMBINATIONS, ids=lambda m: "+".join(m) or "base")
@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_rgb_array_is_one_uint8_image_for_every_game(num_players: int, modules: tuple[str, ...]) -> None:
    e = played(num_players, modules, 12, render_mode="rgb_array")
    frame = e.render()
    assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8
    assert frame.shape == (picture.HEIGHT, picture.WIDTH, 3)
    assert frame.std() > 10  # a drawing, not a blank canvas


def test_every_module_draws_its_pieces() -> None:
    base = picture.draw(played(4, (), 0).game_state).texts()
    full = picture.draw(played(4, ALL, 0).game_state).texts()
    assert "NOBLES" in base and "CITIES" not in base and "TRADING POSTS" not in base
    assert "CITIES" in full and "TRADING POSTS" in full and "NOBLES" not in full  # cities replace nobles
    assert sum(t == "Orient" for t in full) == 3  # the three Orient decks
    assert "strongholds in supply: 3" in full and not any("strongholds" in t for t in base)
    assert {f"player_{p}" for p in range(4)} <= set(full)
    assert "phase: main" in full


def blind_reserve_state() -> tuple[np.ndarray, int]:
    """Player 1 holds a level-3 card reserved blind; nobody else holds a blind reserve."""
    pos = Position(2)
    card = pos.deck(2)[-1]  # the top of the level-3 deck
    return pos.reserve(1, card, blind=True).build(), card


def test_a_blind_reserve_is_face_up_for_its_owner_only() -> None:
    s, card = blind_reserve_state()
    hidden = "hidden"
    assert hidden in picture.draw(s, seat=0).texts()
    assert hidden in picture.draw(s, seat=None).texts()  # a spectator sees no hidden card
    assert hidden not in picture.draw(s, seat=1).texts()
    assert "blind" in picture.draw(s, seat=1).texts()
    # The two images differ only in the header ("as seen by") and player 1's first reserve slot.
    a, b = picture.to_rgb_array(s, seat=0), picture.to_rgb_array(s, seat=1)
    ys, xs = np.nonzero((a != b).any(axis=2))
    body = ys >= 40
    assert body.any(), "the card must look different"
    pw = (picture.WIDTH - 24 - 3 * 8) / 4
    x0 = 12 + (pw + 8)  # player 1's panel
    assert xs[body].min() >= x0 + 10 and xs[body].max() <= x0 + 10 + 66
    assert ys[body].min() >= 444 + 134 and ys[body].max() <= 444 + 134 + 110


def test_seat_and_input_are_checked() -> None:
    s, _ = blind_reserve_state()
    with pytest.raises(ValueError, match="seat"):
        picture.draw(s, seat=2)
    with pytest.raises(TypeError, match="state array"):
        picture.draw(s.astype(np.float32))
    with pytest.raises(TypeError, match="snapshot dict"):
        picture.draw([1, 2, 3])


def test_svg_is_valid_xml_with_the_prestige_and_a_snapshot_draws_the_same() -> None:
    e = played(3, ALL, 60)
    svg = picture.to_svg(e.game_state, seat=None)
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg") and root.get("width") == str(picture.WIDTH)
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    for p in to_dict(e.game_state)["players"]:
        assert f"{p['prestige']} pts" in texts
    assert picture.to_svg(e.snapshot()) == svg  # a snapshot dict is read through the same to_dict


def test_png_bytes_and_image_agree_with_rgb_array() -> None:
    s = played(2, (), 10).game_state
    png = picture.to_png(s)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    from PIL import Image

    decoded = np.asarray(Image.open(__import__("io").BytesIO(png)).convert("RGB"))
    assert np.array_equal(decoded, picture.to_rgb_array(s))


def test_picture_imports_pillow_lazily_and_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    tree = ast.parse((ROOT / "splendor_env/picture.py").read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not any("PIL" in ast.dump(n) for n in top), (
        "Pillow must be imported only when an image is asked for"
    )
    s = played(2, (), 0).game_state
    monkeypatch.setitem(sys.modules, "PIL", None)  # as if Pillow were not installed
    assert picture.to_svg(s).startswith("<svg")  # SVG needs nothing
    with pytest.raises(ImportError, match=r"splendor-env\[render\]"):
        picture.to_png(s)


def test_a_bad_render_mode_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="rgb_array"):
        make_env(render_mode="rgb")
    with pytest.raises(TypeError, match="rgb_array"):
        SplendorGymEnv(opponents="random", render_mode="png")


@pytest.mark.parametrize("modules", [(), ALL], ids=["base", "all"])
def test_pettingzoo_render_test_passes(modules: tuple[str, ...], capsys: pytest.CaptureFixture) -> None:
    render_test(lambda render_mode=None: raw_env(num_players=3, modules=modules, render_mode=render_mode))
    assert "player_0" in capsys.readouterr().out  # "human" printed the text board


def test_the_gymnasium_view_renders_the_learner_seat_for_video_wrappers() -> None:
    env = SplendorGymEnv(opponents="random", render_mode="rgb_array", learner_seat=1)
    assert env.metadata["render_fps"] > 0 and "rgb_array" in env.metadata["render_modes"]
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (picture.HEIGHT, picture.WIDTH, 3) and frame.dtype == np.uint8
    assert np.array_equal(frame, picture.to_rgb_array(env.game.game_state, seat=1))
    collected = gymnasium.wrappers.RenderCollection(env)  # frames gathered step by step, as a recorder does
    obs, info = collected.reset(seed=1)
    collected.step(int(np.flatnonzero(info["action_mask"])[0]))
    frames = collected.render()
    assert len(frames) == 2 and all(f.shape == frame.shape for f in frames)


def test_record_video_wrapper_writes_a_video(tmp_path: Path) -> None:
    pytest.importorskip("moviepy", reason="Gymnasium's RecordVideo needs moviepy")
    env = gymnasium.wrappers.RecordVideo(
        SplendorGymEnv(opponents="random", render_mode="rgb_array", max_turns=4), str(tmp_path)
    )
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = term or trunc
    env.close()
    assert list(tmp_path.glob("*.mp4"))


def test_the_video_command_writes_one_gif_frame_per_move(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    e = played(2, ("orient", "strongholds"), 0, seed=3)
    rng = np.random.default_rng(3)
    actions = []
    for _ in range(9):
        a = int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])))
        e.step(a)
        actions.append(a)
    record = {"num_players": 2, "seed": 3, "modules": ["orient", "strongholds"], "actions": actions}
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    out = tmp_path / "game.gif"
    assert records_main(["video", str(path), "--index", "0", "--out", str(out), "--scale", "0.25"]) == 0
    assert "10 frames" in capsys.readouterr().out
    from PIL import Image

    with Image.open(out) as gif:
        assert gif.n_frames == len(actions) + 1  # the deal, then one frame per move
        assert gif.size == (round(picture.WIDTH * 0.25), round(picture.HEIGHT * 0.25))
    frames = list(records.video_frames(record, scale=0.25))
    assert len(frames) == len(actions) + 1


def test_the_video_command_refuses_other_formats(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps({"num_players": 2, "seed": 0, "actions": []}) + "\n", encoding="utf-8")
    from training.common.cli import run_cli

    assert run_cli(records_main, ["video", str(path), "--out", str(tmp_path / "x.avi")]) == 2
    assert run_cli(records_main, ["video", str(path), "--index", "4", "--out", str(tmp_path / "x.gif")]) == 2


def test_orient_cards_and_strongholds_are_drawn_on_the_market() -> None:
    s = Position(3, modules=("orient", "strongholds")).stronghold(0, 2, 2).build()
    shapes = picture.draw(s).shapes
    seat2 = picture_layout.SEAT[2]
    assert any(isinstance(x, picture.Rect) and x.fill == seat2 and x.w == 26 for x in shapes)
    d = to_dict(s)
    assert all(c >= NUM_CARDS for row in d["orient_market"] for c in row if c >= 0)


def test_the_two_cards_drawn_by_the_draw_two_post_show_to_the_seat_on_move_only() -> None:
    s = Position(2, modules=("trading_posts",)).nobles().trading_posts(0, "draw_two").build()
    s = play(s, reserve_deck(1))
    assert to_dict(s)["phase"] == "keep_drawn_card"
    mover, other, spectator = (picture.draw(s, seat=k).texts() for k in (0, 1, None))
    assert "hidden" not in mover
    assert other.count("hidden") == 2 and spectator.count("hidden") == 2
