"""Every ```python block of the documentation site (docs/**/*.md) runs, so the site cannot rot.

One test per page: the page's blocks run in document order in one namespace,
as a reader pasting them one after the other would, in a fresh working
directory (a tutorial that writes ``results/`` writes it there). Long runs are
shortened: ``BUDGETS`` names the page, the exact text replaced and why, and a
test fails if that text is no longer on the page. A block that must not run
uses another fence (```bash, ```text). The README has its own runner,
``tests/test_readme.py``.

The tutorials' shell commands (their ```bash blocks) run too, one test per
tutorial, in a fresh folder holding the files the tutorial has you write
(``FILES``) and a link to ``configs/``: ``COMMANDS`` says, for every command
on a tutorial page, how it runs (shortened like ``BUDGETS``) or why it does
not, and a test fails when a tutorial has a command it does not list.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``(line, code)`` of each ```python block, the line being the block's first line of code."""
    return [(text[: m.start()].count("\n") + 2, m.group(1)) for m in FENCE.finditer(text)]


PAGES: dict[str, list[tuple[int, str]]] = {
    path.relative_to(DOCS).as_posix(): blocks
    for path in sorted(DOCS.rglob("*.md"))
    if (blocks := python_blocks(path.read_text(encoding="utf-8")))
}

#: (page, text in a block, replacement, why): the site's long runs, shortened for the test suite.
BUDGETS: list[tuple[str, str, str, str]] = [
    (
        "tutorials/maskable-ppo.md",
        "model.learn(total_timesteps=100_000)",
        "model.learn(total_timesteps=2_048)",
        "the full run trains for about 3 minutes; the figure is measured by training.gym_quickstart",
    ),
    (
        "tutorials/maskable-ppo.md",
        "for game in range(100):",
        "for game in range(2):",
        "100 games take a minute",
    ),
    (
        "tutorials/cleanrl-ppo.md",
        "B, T, UPDATES = 64, 32, 30",
        "B, T, UPDATES = 16, 8, 2",
        "30 updates of 64 games take a minute and a half",
    ),
    ("tutorials/own-agent.md", "games=20, seed=0", "games=4, seed=0", "20 games take a few seconds"),
    ("tutorials/tournament.md", "games=20, seed=0", "games=2, seed=0", "60 games take a minute"),
    ("agents.md", '"mcts:sims=50"', '"mcts:sims=5"', "a shorter search says the same"),
]

#: Files a page has you write, by the index of its ```python block: written before its blocks or commands run.
FILES: dict[str, dict[str, int]] = {"tutorials/own-agent.md": {"my_agents.py": 0}}

#: Pages whose blocks need the ``train`` extra (torch, sb3-contrib).
NEEDS = {"tutorials/maskable-ppo.md": "sb3_contrib", "tutorials/cleanrl-ppo.md": "torch"}
#: Pages that train or play many games even when shortened: marked ``slow`` (CI runs them).
SLOW = {"tutorials/maskable-ppo.md", "tutorials/cleanrl-ppo.md", "tutorials/tournament.md"}


def _write_files(page: str, folder: Path) -> None:
    for name, index in FILES.get(page, {}).items():
        (folder / name).write_text(PAGES[page][index][1], encoding="utf-8")


def _source(page: str, code: str) -> str:
    for where, old, new, _why in BUDGETS:
        if where == page:
            code = code.replace(old, new)
    return code


def test_the_site_has_python_blocks_and_every_budget_applies() -> None:
    assert len(PAGES) >= 8, sorted(PAGES)
    for page in ("index.md", "environment/aec.md", "environment/vector.md", "tutorials/cleanrl-ppo.md"):
        assert page in PAGES, f"{page} has no python block"
    assert SLOW.issubset(PAGES) and set(NEEDS).issubset(PAGES)
    for page, old, _new, why in BUDGETS:
        assert page in PAGES, f"budget for {page}, which has no python block"
        assert any(old in code for _, code in PAGES[page]), f"{page} no longer contains {old!r} ({why})"


@pytest.mark.parametrize(
    "page", [pytest.param(p, marks=pytest.mark.slow) if p in SLOW else p for p in sorted(PAGES)]
)
def test_docs_page_blocks_run(page: str, tmp_path: Path) -> None:
    if page in NEEDS:
        pytest.importorskip(NEEDS[page])
    namespace = {"__name__": "__docs__"}
    _write_files(page, tmp_path)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    sys.path.insert(0, str(tmp_path))  # the files the page has you write import from where you are
    try:
        for line, code in PAGES[page]:
            exec(compile(_source(page, code), f"docs/{page}:{line}", "exec"), namespace)  # noqa: S102
    finally:
        os.chdir(cwd)
        sys.path.remove(str(tmp_path))
        for name in FILES.get(page, {}):
            sys.modules.pop(name.removesuffix(".py"), None)


SHELL = re.compile(r"^```(?:bash|sh)\n(.*?)^```", flags=re.S | re.M)


def shell_commands(text: str) -> list[str]:
    """Every command of a page's ```bash blocks: continuation lines joined, trailing ``# comments`` dropped."""
    commands = []
    for block in SHELL.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#\s.*$", "", line).strip()
            if line and not line.startswith("#"):
                commands.append(" ".join(line.split()))
    return commands


TUTORIALS = {
    path.relative_to(DOCS).as_posix(): shell_commands(path.read_text(encoding="utf-8"))
    for path in sorted((DOCS / "tutorials").glob("*.md"))
}
PY_C_MIN_POINTS = (
    "python -c \"import agents; print(agents.make('my_agents:BuyPoints,min_points=1', seed=0).min_points)\""
)
RLLIB_TINY = (
    " --set iterations=1 --set eval.games=2 --set env_runners.num_env_runners=0"
    " --set ppo.train_batch_size=200 --set ppo.minibatch_size=100"
)
#: Why the RLlib tutorial's cluster commands do not run here as written: they need machines of their own.
CLUSTER_WHY = (
    "a head and a node on machines of their own: tests/test_rllib.py runs the same, a head and a node "
    "started by `ray start` on one machine (token authentication on, own folder and ports) and the command "
    "given --address, and stops only that cluster"
)
#: (page, command as the page gives it, what runs instead, or ``None`` and why it does not run).
COMMANDS: list[tuple[str, str, str | None, str]] = [
    ("tutorials/own-agent.md", "export PYTHONPATH=$PWD", "export PYTHONPATH=$PWD", "my_agents.py's folder"),
    (
        "tutorials/own-agent.md",
        "python -m training.play --agents my_agents:BuyPoints random --games 10 --quiet",
        "python -m training.play --agents my_agents:BuyPoints random --games 2 --quiet",
        "two games say the same",
    ),
    (
        "tutorials/own-agent.md",
        "python -m training.evaluate my_agents:BuyPoints,min_points=1 --opponents random greedy --games 200",
        "python -m training.evaluate my_agents:BuyPoints,min_points=1 --opponents random greedy --games 4",
        "400 games take a minute",
    ),
    (
        "tutorials/own-agent.md",
        "python -m training.tournament --agents my_agents:BuyPoints greedy lookahead --games 100 --out results/mine",
        "python -m training.tournament --agents my_agents:BuyPoints greedy lookahead --games 2 --out results/mine",
        "300 games take minutes",
    ),
    (
        "tutorials/own-agent.md",
        "python -m training.benchmark my_agents:BuyPoints --quick --out results/buy_points_card",
        None,
        "a quick card plays 50 games against each reference in every game the agent plays (minutes); "
        "tests/test_benchmark.py runs the card",
    ),
    (
        "tutorials/own-agent.md",
        PY_C_MIN_POINTS,
        PY_C_MIN_POINTS,
        "",
    ),
    (
        "tutorials/tournament.md",
        "python -m training.tournament --agents random greedy lookahead --players 2 --games 20 --seed 0 --out results/tutorial",
        "python -m training.tournament --agents random greedy lookahead --players 2 --games 2 --seed 0 --out results/tutorial",
        "60 games (3 pairs x 20) take a minute",
    ),
    ("tutorials/rllib.md", "python3 -m venv .venv-rllib", None, "an install: .ci/run makes the same venv"),
    (
        "tutorials/rllib.md",
        "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu",
        None,
        "an install, from the network: .ci/run installs the same torch",
    ),
    (
        "tutorials/rllib.md",
        "pip install -e '.[train,test,rllib]'",
        None,
        "an install: .ci/run installs the same extras",
    ),
    (
        "tutorials/rllib.md",
        "python -m pytest -q tests/test_rllib.py tests/test_env.py",
        None,
        "the tests themselves: .ci/run runs them in the rllib venv",
    ),
    (
        "tutorials/rllib.md",
        "python -m training.rllib_ppo --config configs/rllib_ppo_2p.yaml --set max_wall_minutes=5",
        "python -m training.rllib_ppo --config configs/rllib_ppo_2p.yaml --set max_wall_minutes=5"
        + RLLIB_TINY,
        "one small iteration, in the driver",
    ),
    (
        "tutorials/rllib.md",
        "python -m training.rllib_ppo --config configs/rllib_ppo_2p.yaml --set iterations=80 --resume",
        "python -m training.rllib_ppo --config configs/rllib_ppo_2p.yaml --set iterations=80 --resume"
        + RLLIB_TINY.replace("iterations=1", "iterations=2"),
        "one more small iteration",
    ),
    *[
        ("tutorials/rllib.md", command, None, CLUSTER_WHY)
        for command in (
            "ray start --head --port=6379 --temp-dir /tmp/ray-$USER",
            "RAY_AUTH_MODE=token .venv-rllib/bin/ray start --address=HEAD_IP:6379",
            "python -m training.rllib_ppo --config configs/rllib_ppo_2p.yaml --address HEAD_IP:6379",
        )
    ],
]
#: Tutorials whose commands need an extra: their test runs where it is installed (CI: the rllib venv).
COMMANDS_NEED = {"tutorials/rllib.md": "ray.rllib"}


def _command_prefix(command: str) -> str:
    """The command without the venv's path (``.venv-rllib/bin/pip`` is ``pip``)."""
    return re.sub(r"^\S*/bin/", "", command)


def test_every_tutorial_command_is_run_or_says_why_not() -> None:
    listed = {(page, command) for page, command, _run, _why in COMMANDS}
    for page, commands in TUTORIALS.items():
        for command in commands:
            assert (page, _command_prefix(command)) in listed, f"{page}: no entry in COMMANDS for {command!r}"
    for page, command, run, why in COMMANDS:
        assert command in map(_command_prefix, TUTORIALS[page]), f"{page} no longer has {command!r}"
        assert run is not None or why, f"{page}: {command!r} is skipped without a reason"


def run_tutorial_commands(page: str, folder: Path) -> list[str]:
    """Run a tutorial's commands as ``COMMANDS`` says, in ``folder``; returns each command's output."""
    _write_files(page, folder)
    (folder / "configs").symlink_to(ROOT / "configs")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outputs = []
    for where, _command, run, _why in COMMANDS:
        if where != page or run is None:
            continue
        if run.startswith("export "):
            name, _, value = run.removeprefix("export ").partition("=")
            env[name] = value.replace("$PWD", str(folder)) + os.pathsep + str(ROOT)
            continue
        argv = shlex.split(run)
        argv[0] = sys.executable if argv[0] in ("python", "python3") else argv[0]
        done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{run}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        outputs.append(done.stdout)
    return outputs


@pytest.mark.slow
@pytest.mark.parametrize("page", sorted(p for p in TUTORIALS if TUTORIALS[p]))
def test_tutorial_commands_run(page: str, tmp_path: Path) -> None:
    if page in COMMANDS_NEED:
        pytest.importorskip(COMMANDS_NEED[page])
    run_tutorial_commands(page, tmp_path)
