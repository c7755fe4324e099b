"""Golden playthrough (in the style of OpenSpiel's playthrough files).

One seeded 2-player game with random legal actions from a fixed numpy seed is
written out step by step: player, phase, legal action ids, the chosen action
in words, rewards; the board is drawn at the start and at the end. The text is
committed under ``tests/golden/``; any change in dealing, legality, effects,
rewards or descriptions shows up as a diff. After an intended change,
regenerate with ``SPLENDOR_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/test_playthrough.py``
and review the diff before committing it.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import numpy as np
import pytest

from splendor_env import env
from splendor_env import state as st
from splendor_env.deal import new_state

GOLDEN = Path(__file__).parent / "golden" / "playthrough_2p_seed2024.txt"
GAME_SEED = 2024
POLICY_SEED = 7


def _board(e) -> str:
    """The ansi drawing without trailing spaces (editors strip them from committed files)."""
    return "\n".join(line.rstrip() for line in e.render().splitlines())


def _rewards(e) -> str:
    return " ".join(f"{a}={e.rewards[a]:+g}" for a in e.possible_agents)


def playthrough() -> str:
    e = env(num_players=2, render_mode="ansi")
    e.reset(seed=GAME_SEED)
    rng = np.random.default_rng(POLICY_SEED)
    lines = [
        "# Splendor golden playthrough: env(num_players=2), reset(seed=2024),",
        "# uniformly random legal actions from numpy default_rng(7).",
        "",
        "## initial board",
        _board(e),
        "",
        "## steps",
    ]
    step = 0
    while e.agents:
        agent = e.agent_selection
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        phase = st.PHASE_NAMES[e.game_state[st.PHASE]]
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        action = int(rng.choice(legal))
        text = e.describe_action(action)
        e.step(action)
        lines.append(
            f"{step:3d} {agent} {phase:<7} legal={legal} -> {action}: {text} | rewards {_rewards(e)}"
        )
        step += 1
    snap_winners = e.snapshot()["winners"]
    lines += [
        "",
        "## final board",
        _board(e),
        "",
        f"winners: {snap_winners}",
        "",
    ]
    return "\n".join(lines)


def assert_matches_golden(text: str, golden: Path) -> None:
    """Diff ``text`` against a golden file (``SPLENDOR_REGEN_GOLDEN=1`` rewrites it instead)."""
    if os.environ.get("SPLENDOR_REGEN_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
        pytest.skip(f"regenerated {golden}")
    assert golden.exists(), f"missing {golden}; generate it with SPLENDOR_REGEN_GOLDEN=1"
    expected = golden.read_text(encoding="utf-8")
    if text != expected:
        diff = "\n".join(
            list(
                difflib.unified_diff(
                    expected.splitlines(), text.splitlines(), "golden", "now", lineterm="", n=1
                )
            )[:40]
        )
        pytest.fail(f"playthrough differs from {golden.name}:\n{diff}")


def test_golden_playthrough() -> None:
    assert_matches_golden(playthrough(), GOLDEN)


# ---------------------------------------------------------------------------
# Module games: one golden file per module and one with all four, each holding
# a seeded 2, 3 and 4 player game. Every step records the player, phase, legal
# ids, the action (id and words) and the state fields it changed, so a change
# to the layout, dealing, legality or any effect shows up as a diff.

MODULE_GOLDENS = {
    "cities": ("cities",),
    "trading_posts": ("trading_posts",),
    "orient": ("orient",),
    "strongholds": ("strongholds",),
    "all": st.MODULE_NAMES,
}
#: Turn cap of the module games: long enough for purchases, effects and cities, short enough to diff fast.
MODULE_MAX_TURNS = 90


def _module_golden(name: str) -> Path:
    return Path(__file__).parent / "golden" / f"playthrough_modules_{name}.txt"


def _module_policy(rng: np.random.Generator, legal: list[int]) -> int:
    """Random legal action, buying (base or Orient) four times in five when a purchase is legal,
    so the short games reach purchases, effects, cities and conquests."""
    from splendor_env import actions as ac

    buys = [
        a
        for a in legal
        if ac.BUY_MARKET <= a < ac.DISCARD or ac.BUY_OMARKET <= a < ac.PAIR_TARGET or a > ac.CONQUEST
    ]
    if buys and rng.random() < 0.8:
        return int(rng.choice(buys))
    return int(rng.choice(legal))


def module_playthrough(name: str) -> str:
    from splendor_env import rules
    from splendor_env.actions import describe, num_actions

    mods = MODULE_GOLDENS[name]
    lines = [
        f"# Splendor golden playthrough, modules {list(mods)}: new_state(n, seed=100+n, max_turns="
        f"{MODULE_MAX_TURNS}), buy-biased random policy from numpy default_rng(n).",
        "# step player phase legal=[ids] -> action: words | changed state fields addr=value",
    ]
    for n in (2, 3, 4):
        s = new_state(n, seed=100 + n, max_turns=MODULE_MAX_TURNS, modules=mods)
        rng = np.random.default_rng(n)
        mask = np.zeros(num_actions(int(s[st.MODULES])), dtype=np.int8)
        lines += ["", f"## {n} players", "state " + " ".join(map(str, s.tolist()))]
        step = 0
        while not rules.is_over(s):
            rules.legal_mask(s, mask)
            legal = np.flatnonzero(mask).tolist()
            action = _module_policy(rng, legal)
            text = describe(action, s)
            phase = st.PHASE_NAMES[s[st.PHASE]]
            before = s.copy()
            rules.apply_action(s, action)
            changed = np.flatnonzero(before != s)
            delta = " ".join(f"{i}={s[i]}" for i in changed)
            lines.append(f"{step} p{before[st.CURRENT]} {phase} legal={legal} -> {action}: {text} | {delta}")
            step += 1
        lines.append(
            f"end {st.PHASE_NAMES[s[st.PHASE]]} turn {s[st.TURN]} winners "
            f"{np.flatnonzero(s[st.OUTCOME : st.OUTCOME + n]).tolist()}"
        )
    lines.append("")
    return "\n".join(lines)


@pytest.mark.parametrize("name", list(MODULE_GOLDENS))
def test_module_golden_playthrough(name: str) -> None:
    assert_matches_golden(module_playthrough(name), _module_golden(name))


def test_playthrough_is_deterministic() -> None:
    assert playthrough() == playthrough()


def test_golden_game_reaches_the_end() -> None:
    """The committed game is a complete one, so it exercises the scoring too."""
    expected = GOLDEN.read_text(encoding="utf-8") if GOLDEN.exists() else playthrough()
    assert "game over:" in expected and "winners: [" in expected
