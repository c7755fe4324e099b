"""A picture of a position: one layout of shapes, drawn as SVG (no dependency) or by Pillow.

Why one layout and two outputs: :func:`draw` reads a position (a state array
or a snapshot dict, through :func:`splendor_env.snapshot.to_dict`, so the
state layout is read in one place only) and returns a :class:`Picture`, a
plain list of rectangles, circles and text. :func:`to_svg` writes that list as
SVG with the standard library; :func:`to_image`, :func:`to_png` and
:func:`to_rgb_array` paint the same list with Pillow (``pip install
'splendor-env[render]'``), which is what ``render_mode="rgb_array"`` uses.
The two outputs cannot disagree about what is on the board.

What is drawn is what the viewing ``seat`` may see: every public piece (the
three market rows with each card's colour, points and cost, deck sizes,
nobles, the bank, every seat's tokens, bonuses, prestige, reserved cards and
nobles, whose turn it is and the pending decision, and every module's pieces:
cities, trading posts, the Orient row and decks, strongholds). A blind
reserve (a card reserved from a deck) is face up for its owner only; the two
cards drawn by the draw-two trading post are face up for the seat on move
only. ``seat=None`` is a spectator: no hidden card at all.

Pillow paints 90 to 130 frames a second of a 4-player game with every module
(1280x840) on one core of a shared machine (``python -m training.speed.render``):
text is rasterised once per distinct string and size, then stamped.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from functools import lru_cache
from typing import Any

import numpy as np

from .picture_layout import (
    BACKGROUND,
    HEIGHT,
    RGB,
    WIDTH,
    Circle,
    Layout,
    Picture,
    Rect,
    Text,
    as_snapshot,
    check_seat,
)

RENDER_EXTRA_HINT = "pip install 'splendor-env[render]' (or pip install pillow)"


def draw(
    state_or_snapshot: Any,
    seat: int | None = None,
    caption: str | None = None,
    names: list[str] | None = None,
) -> Picture:
    """The position as a :class:`Picture` (shapes), as ``seat`` sees it (``None``: a spectator).

    ``state_or_snapshot``: an engine state array (``env.game_state``)
    or a snapshot dict (``env.snapshot()``, validated first). ``caption``: a
    line under the board (a video writes the move there); ``names``: a label
    per seat (the agents of a recorded game).
    """
    d = as_snapshot(state_or_snapshot)
    return Picture(shapes=Layout(d, check_seat(seat, int(d["num_players"])), caption, names).build())


# ---------------------------------------------------------------------------
# SVG (standard library only)


def _hex(rgb: RGB | None) -> str:
    return "none" if rgb is None else "#{:02x}{:02x}{:02x}".format(*rgb)


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def picture_to_svg(picture: Picture) -> str:
    """A :class:`Picture` as an SVG document (a string)."""
    root = ET.Element(
        "svg",
        xmlns="http://www.w3.org/2000/svg",
        width=str(picture.width),
        height=str(picture.height),
        viewBox=f"0 0 {picture.width} {picture.height}",
        attrib={"font-family": "Helvetica, Arial, sans-serif"},
    )
    anchor = {"l": "start", "m": "middle", "r": "end"}
    for s in picture.shapes:
        if isinstance(s, Rect):
            a = {
                "x": _num(s.x),
                "y": _num(s.y),
                "width": _num(s.w),
                "height": _num(s.h),
                "fill": _hex(s.fill),
            }
            if s.radius:
                a["rx"] = _num(s.radius)
            if s.outline is not None:
                a["stroke"] = _hex(s.outline)
                a["stroke-width"] = str(s.width)
            ET.SubElement(root, "rect", a)
        elif isinstance(s, Circle):
            a = {"cx": _num(s.cx), "cy": _num(s.cy), "r": _num(s.r), "fill": _hex(s.fill)}
            if s.outline is not None:
                a["stroke"] = _hex(s.outline)
            ET.SubElement(root, "circle", a)
        else:
            a = {
                "x": _num(s.x),
                "y": _num(s.y),
                "font-size": str(s.size),
                "fill": _hex(s.fill),
                "text-anchor": anchor[s.align],
                "dominant-baseline": "central",
            }
            if s.bold:
                a["font-weight"] = "bold"
            ET.SubElement(root, "text", a).text = s.text
    return ET.tostring(root, encoding="unicode")


def to_svg(state_or_snapshot: Any, seat: int | None = None, **kw: Any) -> str:
    """The picture of a position as SVG text (needs no extra package); see :func:`draw`."""
    return picture_to_svg(draw(state_or_snapshot, seat, **kw))


# ---------------------------------------------------------------------------
# Pillow: images, PNG, rgb arrays


def _pil() -> Any:
    """Pillow's modules, imported when first asked for (it is an optional extra)."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as exc:  # pragma: no cover - the test environment has Pillow
        raise ImportError(
            f"drawing a picture as an image (PNG, rgb_array, GIF) needs Pillow: {RENDER_EXTRA_HINT}"
        ) from exc
    return Image, ImageDraw, ImageFont


@lru_cache(maxsize=32)
def _font(size: int) -> Any:
    _, _, ImageFont = _pil()
    return ImageFont.load_default(size=size)


@lru_cache(maxsize=4096)
def _glyphs(text: str, size: int, align: str, bold: bool) -> tuple[Any, int, int]:
    """``(mask, dx, dy)``: the text rasterised once; stamped at ``(x + dx, y + dy)``.

    Why a cache: a board holds a few hundred strings, nearly all of them the
    same from frame to frame ("3", "pts", a colour count); rasterising them
    again every frame would cost most of the frame.
    """
    Image, ImageDraw, _ = _pil()
    font = _font(size)
    anchor = align + "m"
    stroke = 1 if bold and size >= 15 else 0
    left, top, right, bottom = font.getbbox(text, anchor=anchor, stroke_width=stroke)
    mask = Image.new("L", (max(1, right - left), max(1, bottom - top)), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, fill=255, font=font, anchor=anchor, stroke_width=stroke)
    return mask, left, top


def picture_to_image(picture: Picture) -> Any:
    """A :class:`Picture` painted by Pillow (an RGB ``PIL.Image.Image``)."""
    Image, ImageDraw, _ = _pil()
    img = Image.new("RGB", (picture.width, picture.height), BACKGROUND)
    pen = ImageDraw.Draw(img)
    for s in picture.shapes:
        if isinstance(s, Rect):
            box = (round(s.x), round(s.y), round(s.x + s.w) - 1, round(s.y + s.h) - 1)
            if s.radius:
                pen.rounded_rectangle(box, round(s.radius), fill=s.fill, outline=s.outline, width=s.width)
            else:
                pen.rectangle(box, fill=s.fill, outline=s.outline, width=s.width)
        elif isinstance(s, Circle):
            box = (round(s.cx - s.r), round(s.cy - s.r), round(s.cx + s.r), round(s.cy + s.r))
            pen.ellipse(box, fill=s.fill, outline=s.outline)
        else:
            mask, dx, dy = _glyphs(s.text, s.size, s.align, s.bold)
            img.paste(s.fill, (round(s.x) + dx, round(s.y) + dy), mask)
    return img


def to_image(state_or_snapshot: Any, seat: int | None = None, **kw: Any) -> Any:
    """The picture of a position as a ``PIL.Image.Image`` (needs the ``render`` extra); see :func:`draw`."""
    return picture_to_image(draw(state_or_snapshot, seat, **kw))


def to_png(state_or_snapshot: Any, seat: int | None = None, **kw: Any) -> bytes:
    """The picture of a position as PNG bytes (needs the ``render`` extra); see :func:`draw`."""
    buf = io.BytesIO()
    to_image(state_or_snapshot, seat, **kw).save(buf, format="PNG")
    return buf.getvalue()


def to_rgb_array(state_or_snapshot: Any, seat: int | None = None, **kw: Any) -> np.ndarray:
    """The picture of a position as ``uint8[HEIGHT, WIDTH, 3]`` (what ``render_mode="rgb_array"`` returns)."""
    return np.asarray(to_image(state_or_snapshot, seat, **kw), dtype=np.uint8).copy()


__all__ = [
    "HEIGHT",
    "WIDTH",
    "Circle",
    "Picture",
    "Rect",
    "Text",
    "draw",
    "picture_to_image",
    "picture_to_svg",
    "to_image",
    "to_png",
    "to_rgb_array",
    "to_svg",
]
