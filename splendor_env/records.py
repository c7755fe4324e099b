"""Game records: one JSON object per line, written, read, checked and replayed exactly.

Why here: a record needs only the engine to replay (the deal seed and the action ids; no agent),
so the format lives with the engine; :mod:`agents.runner` writes it and ``python -m
training.records`` is its command line.

Record fields: ``num_players``, ``seed`` (the deal), ``max_turns``, ``modules``,
``agents`` (spec per seat), ``agent_seeds``, ``actions`` (every decision in
order, discards and noble choices included), ``prestige`` and ``cards`` per
seat, ``winners`` (seats; several for a shared victory, none when truncated),
``truncated``, ``turns``, plus tournament bookkeeping (``index``, ``table``,
``deal``, ``seating``). :func:`env_at` resumes a record at any move as a live
env (to explore alternatives, or to train from there).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from . import state as st
from .env import raw_env
from .render import render_text

#: Fields compared by :func:`replay` between the record and the replayed game.
RESULT_FIELDS = ("prestige", "cards", "winners", "truncated", "turns")


# ---------------------------------------------------------------------------
# Writing and reading


def game_result(s: np.ndarray) -> dict[str, Any]:
    """The result fields (:data:`RESULT_FIELDS`) of a finished (or truncated) game state."""
    n = int(s[st.N_PLAYERS])
    offs = [st.player_offset(p) for p in range(n)]
    return {
        "prestige": [int(s[po + st.P_PRESTIGE]) for po in offs],
        "cards": [int(s[po + st.P_CARDS]) for po in offs],
        "winners": [p for p in range(n) if s[st.OUTCOME + p]],
        "truncated": bool(s[st.PHASE] == st.PHASE_TRUNCATED),
        "turns": int(s[st.TURN]),
    }


def game_record(
    env: raw_env,
    seed: int,
    labels: Sequence[str],
    actions: Sequence[int],
    agent_seeds: Sequence[int] | None = None,
) -> dict[str, Any]:
    """The record of the game ``env`` just played from the deal ``seed`` with ``actions``."""
    record: dict[str, Any] = {
        "num_players": env.config.num_players,
        "seed": seed,
        "max_turns": env.config.max_turns,
        "modules": list(env.config.modules),
        "agents": list(labels),
    }
    if agent_seeds is not None:
        record["agent_seeds"] = [int(s) for s in agent_seeds]
    record["actions"] = [int(a) for a in actions]
    return {**record, **game_result(env.game_state)}


def write_records(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    """Write records as JSON lines; returns how many were written."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, separators=(",", ":")) + "\n")
            n += 1
    return n


def read_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield the records of a JSON-lines file (blank lines skipped)."""
    with open(path, encoding="utf-8", errors="strict") as fh:
        yield from parse_records(_lines(fh, path), path)


def parse_records(lines: Iterable[str], where: str | Path) -> Iterator[Any]:
    """The records of JSON lines (blank lines skipped); ``where`` names the source in an error."""
    for lineno, line in enumerate(lines, 1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}:{lineno}: not a JSON record: {exc}") from exc


def _lines(fh: Any, path: str | Path) -> Iterator[str]:
    try:
        yield from fh
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a text (JSON-lines) file: {exc.reason} at byte {exc.start}") from None


def check_record(record: Any) -> None:
    """Refuse a record that cannot be replayed, naming the field (before any env is built)."""
    if not isinstance(record, dict):
        raise ValueError(f"a record must be a JSON object, got {type(record).__name__}")
    for key in ("num_players", "seed", "actions"):
        if key not in record:
            raise ValueError(f"record field {key!r} is missing")

    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    if not is_int(record["num_players"]) or record["num_players"] not in (2, 3, 4):
        raise ValueError(f"record field 'num_players' must be 2, 3 or 4, got {record['num_players']!r}")
    if not is_int(record["seed"]) or not 0 <= record["seed"] < 2**63:
        raise ValueError(f"record field 'seed' must be an int in 0..2**63-1, got {record['seed']!r}")
    max_turns = record.get("max_turns", st.DEFAULT_MAX_TURNS)
    if not is_int(max_turns) or not 1 <= max_turns < 2**31:
        raise ValueError(f"record field 'max_turns' must be an int in 1..2**31-1, got {max_turns!r}")
    actions = record["actions"]
    if not isinstance(actions, list) or not all(is_int(a) for a in actions):
        raise ValueError("record field 'actions' must be a list of integer action ids")
    modules = record.get("modules", [])
    if not isinstance(modules, list) or not all(isinstance(m, str) for m in modules):
        raise ValueError(f"record field 'modules' must be a list of module names, got {modules!r}")
    if record.get("agents") is not None:  # absent or null: the seats are named player_0..
        names = record["agents"]
        n = record["num_players"]
        if not isinstance(names, list) or len(names) != n or not all(isinstance(a, str) for a in names):
            raise ValueError(
                f"record field 'agents' must be a list of {n} names (one per seat), got {names!r}"
            )


# ---------------------------------------------------------------------------
# Replaying


def seat_of(name: str) -> int:
    """``"player_2"`` -> 2 (the AEC env's agent names)."""
    return int(name.rsplit("_", 1)[1])


def is_over(env: raw_env) -> bool:
    """Whether the AEC env's game has ended (won or truncated)."""
    return int(env.game_state[st.PHASE]) in (st.PHASE_GAME_OVER, st.PHASE_TRUNCATED)


def new_env(record: dict[str, Any]) -> raw_env:
    """A strict AEC env with the record's options, dealt with its seed (the record checked first)."""
    check_record(record)
    env = raw_env(
        num_players=int(record["num_players"]),
        max_turns=int(record.get("max_turns", st.DEFAULT_MAX_TURNS)),
        modules=tuple(record.get("modules", ())),
    )
    env.reset(seed=int(record["seed"]))
    return env


def env_at(record: dict[str, Any], move: int) -> raw_env:
    """The record's game as a live env after its first ``move`` decisions (0 = the deal).

    Continue it with ``env.step(...)``, or hand ``env.snapshot()`` to
    ``SplendorGymEnv.reset(options={"snapshot": ...})``.
    """
    check_record(record)
    actions = list(record["actions"])
    if isinstance(move, bool) or not isinstance(move, int) or not 0 <= move <= len(actions):
        raise ValueError(
            f"move must be an int in 0..{len(actions)} (the record has {len(actions)} actions), got {move!r}"
        )
    env = new_env(record)
    for i, action in enumerate(actions[:move]):
        if is_over(env):  # as replay() says it, not PettingZoo's words for a dead agent's move
            raise ValueError(f"record has {len(actions) - i} action(s) after the end of the game")
        env.step(int(action))
    return env


class ReplayedMove(NamedTuple):
    """One decision of a replayed record: its number (from 1), who made it, the move in words and
    the env after it (the same live object for every move of one replay)."""

    number: int
    who: str
    words: str
    env: raw_env

    @property
    def line(self) -> str:
        """``move   3  turn   2  player_0 (greedy): take ...`` (the replay text and video captions)."""
        turn = int(self.env.game_state[st.TURN])
        return f"move {self.number:>3}  turn {turn:>3}  {self.who}: {self.words}"


def replayed_moves(record: dict[str, Any]) -> Iterator[ReplayedMove]:
    """Each decision of the record, in order: the one replay loop behind :func:`replay_moves`
    (text), :func:`video_frames` (pictures) and the browser app's replays."""
    env = new_env(record)
    n = int(record["num_players"])
    specs = record.get("agents")
    if not isinstance(specs, list) or len(specs) != n:
        specs = [None] * n
    for i, action in enumerate(record["actions"]):
        if is_over(env):
            raise ValueError(f"record has {len(record['actions']) - i} action(s) after the end of the game")
        seat = seat_of(env.agent_selection)
        who = f"player_{seat} ({specs[seat]})" if specs[seat] else f"player_{seat}"
        words = env.describe_action(int(action))
        env.step(int(action))
        yield ReplayedMove(i + 1, who, words, env)


def replay_moves(record: dict[str, Any], render: bool = False) -> Iterator[str]:
    """The game move by move in words (``render``: with the board after each move)."""
    for move in replayed_moves(record):
        yield move.line
        if render:
            yield render_text(move.env.game_state, viewer=None) + "\n"


def replay(record: dict[str, Any], render: bool = False) -> tuple[bool, dict[str, Any], str | None]:
    """Replay a record through the AEC env: ``(matches, replayed result, final render or None)``.

    Raises ``ValueError`` for a malformed record (:func:`check_record`) and
    :class:`splendor_env.IllegalActionError` if an action is illegal at its
    point of the replay (a corrupt record).
    """
    env = new_env(record)
    actions = list(record["actions"])
    for i, action in enumerate(actions):
        if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
            raise ValueError(f"record has {len(actions) - i} action(s) after the end of the game")
        env.step(int(action))
    result = game_result(env.game_state)
    ok = all(result[k] == record.get(k) for k in RESULT_FIELDS)
    text = render_text(env.game_state, viewer=None) if render else None
    return ok, result, text


# ---------------------------------------------------------------------------
# Videos (needs the ``render`` extra: Pillow; an MP4 also imageio-ffmpeg)


def video_frames(record: dict[str, Any], seat: int | None = None, scale: float = 1.0) -> Iterator[Any]:
    """The record's game as ``PIL.Image`` frames: the deal, then the position after each decision.

    Every frame after the first carries the move that led to it in words under
    the board; ``seat`` picks whose hidden cards show (``None``: a spectator,
    none); ``scale`` shrinks the frames (0.5: half width and height).
    """
    from .picture import to_image

    if not 0.1 <= scale <= 1.0:
        raise ValueError(f"scale must be in 0.1..1.0, got {scale}")
    names = record.get("agents")

    def frame(state: Any, caption: str) -> Any:
        img = to_image(state, seat, caption=caption, names=names)
        if scale != 1.0:
            img = img.resize((round(img.width * scale), round(img.height * scale)), resample=1)  # LANCZOS
        return img

    yield frame(new_env(record).game_state, f"the deal (seed {record['seed']})")
    for move in replayed_moves(record):
        yield frame(move.env.game_state, " ".join(move.line.split()))


def write_video(
    record: dict[str, Any], out: str | Path, seat: int | None = None, fps: float = 2.0, scale: float = 1.0
) -> int:
    """Write the record's game as a GIF (Pillow) or an MP4 (imageio-ffmpeg); returns the frame count.

    One frame for the deal and one per decision (:func:`video_frames`); the last
    frame is held for three seconds. A GIF shares one palette across frames, so
    a frame stores only what the move changed and the file stays small.
    """
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in (".gif", ".mp4"):
        raise ValueError(f"the video must be a .gif or an .mp4 file, got {out.name!r}")
    if not 0.1 <= fps <= 60:
        raise ValueError(f"fps must be in 0.1..60, got {fps}")
    if suffix == ".mp4":
        try:
            import imageio.v2 as imageio
            import imageio_ffmpeg  # noqa: F401 - only to fail early with a clear message
        except ImportError as exc:
            raise ValueError(
                "an .mp4 needs imageio and imageio-ffmpeg (pip install imageio-ffmpeg); write a .gif"
            ) from exc

        count = 0
        with imageio.get_writer(out, fps=fps, macro_block_size=1) as writer:
            for img in video_frames(record, seat, scale):
                writer.append_data(np.asarray(img))
                count += 1
        return count
    frames = list(video_frames(record, seat, scale))
    palette = frames[0].quantize(colors=255)
    paletted = [
        f.quantize(palette=palette, dither=0) for f in frames
    ]  # one palette: no flicker, small deltas
    duration = [round(1000 / fps)] * (len(frames) - 1) + [3000]
    paletted[0].save(out, save_all=True, append_images=paletted[1:], duration=duration, loop=0, optimize=True)
    return len(frames)


__all__ = [
    "RESULT_FIELDS",
    "ReplayedMove",
    "check_record",
    "env_at",
    "game_record",
    "game_result",
    "is_over",
    "new_env",
    "parse_records",
    "read_records",
    "replay",
    "replay_moves",
    "replayed_moves",
    "seat_of",
    "video_frames",
    "write_records",
    "write_video",
]
