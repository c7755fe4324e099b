"""Saved progress (``JobLog``) is verified when a run resumes: a bad record costs only its own job.

Each record carries a checksum of its content; a record that fails it, does not parse, lacks
a key or is not UTF-8 is reported with its file and line, set aside and its job played again,
and the good records after it are kept. A line cut short by a kill (the last one) is dropped
silently, and files written before checksums still resume.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from training.common.progress import JobLog

RECORDS = 100


def written(path: Path, count: int = RECORDS) -> dict[int, Any]:
    """A log of ``count`` finished jobs, as a run writes it; what it holds."""
    log = JobLog(path, resume=False)
    for key in range(count):
        log.add(key, {"winners": [key % 2], "prestige": [15, key % 15]})
    log.close()
    return {key: {"winners": [key % 2], "prestige": [15, key % 15]} for key in range(count)}


def replace_line(path: Path, number: int, new: bytes) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    lines[number - 1] = new
    path.write_bytes(b"".join(lines))


def resumed(path: Path) -> tuple[dict[int, Any], list[str]]:
    """What a resumed run reads back, and what it reports."""
    said: list[str] = []
    log = JobLog(path, resume=True, report=said.append)
    log.close()
    return log.done, said


def test_a_garbled_line_costs_only_its_own_job(tmp_path: Path) -> None:
    path = tmp_path / "games.progress.jsonl"
    whole = written(path)
    replace_line(path, 10, b'{"job": 9, "resu#\x00lt": garbage\n')
    done, said = resumed(path)
    assert done == {k: v for k, v in whole.items() if k != 9}  # the 90 records after it are kept
    assert len(said) == 1 and f"{path}: line 10:" in said[0] and "played again" in said[0]
    assert len(path.read_text().splitlines()) == RECORDS - 1
    assert "resu#" in (tmp_path / "games.progress.jsonl.bad").read_text()  # kept for a look


def test_a_record_changed_in_valid_json_is_caught_by_its_checksum(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    whole = written(path)
    lines = path.read_text().splitlines(keepends=True)
    assert '"winners":[1]' in lines[41]
    replace_line(path, 42, lines[41].replace('"winners":[1]', '"winners":[0]').encode())
    done, said = resumed(path)
    assert 41 not in done and len(done) == RECORDS - 1 and done[42] == whole[42]
    assert len(said) == 1 and f"{path}: line 42: job 41's record does not match its checksum" in said[0]


def test_an_incomplete_record_is_reported_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    written(path, 5)
    replace_line(path, 2, b'{"job": 1}\n')
    done, said = resumed(path)
    assert sorted(done) == [0, 2, 3, 4]
    assert said == [
        f"{path}: line 2: the record has no result (keys: job); "
        f"set aside in {path}.bad, its job will be played again"
    ]


def test_bytes_that_are_not_utf8_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    written(path, 5)
    replace_line(path, 3, b'{"job": 2, "result": "\xff\xfe"}\n')
    done, said = resumed(path)
    assert sorted(done) == [0, 1, 3, 4]
    assert len(said) == 1 and f"{path}: line 3: not UTF-8 text" in said[0]


def test_a_check_of_the_content_drops_a_record_it_refuses(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"job": 0, "result": {"winners": [0]}}\n{"job": 1, "result": {}}\n')  # no checksums
    said: list[str] = []
    log = JobLog(
        path, resume=True, report=said.append, check=lambda r: None if "winners" in r else "no winners"
    )
    log.close()
    assert log.done == {0: {"winners": [0]}} and "line 2: no winners" in said[0]


def test_a_log_written_before_checksums_still_resumes(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"job": 0, "result": {"a": 1}}\n{"job":2,"result":[1,2]}\n')
    done, said = resumed(path)
    assert done == {0: {"a": 1}, 2: [1, 2]} and said == []


def test_a_line_cut_short_at_the_end_is_dropped_silently(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    whole = written(path, 5)
    text = path.read_text()
    path.write_text(text + text.splitlines()[0][:30])  # a kill in the middle of a write
    done, said = resumed(path)
    assert done == whole and said == [] and path.read_text() == text


def test_every_record_carries_its_checksum(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    written(path, 3)
    for line in path.read_text().splitlines():
        assert set(json.loads(line)) == {"job", "result", "sha256"}


@pytest.mark.slow
def test_a_tournament_replays_only_the_games_whose_records_are_bad(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from training.matches.tournament import PROGRESS, run_tournament

    def tables(out: Path) -> dict[str, Any]:
        summary = json.loads((out / "summary.json").read_text())
        return {"ratings": summary["ratings"], "winrates": (out / "winrates.csv").read_text()}

    def resume() -> dict[str, Any]:
        run_tournament(["greedy", "random"], 2, 6, 1, out=tmp_path / "t", resume=True, **args)
        return tables(tmp_path / "t")

    args: dict[str, Any] = {"seed": 3, "progress": False, "echo": None}
    run_tournament(["greedy", "random"], 2, 6, 1, out=tmp_path / "t", **args)
    whole = tables(tmp_path / "t")
    path = tmp_path / "t" / PROGRESS
    records = [json.loads(line) for line in path.read_text().splitlines()]
    flipped = json.loads(json.dumps(records[2]))
    flipped["result"]["winners"] = [1 - flipped["result"]["winners"][0]]  # valid JSON, the winner changed
    path.write_text("".join(json.dumps(r) + "\n" for r in [*records[:2], flipped, *records[3:]]))
    assert resume() == whole
    assert "line 3: job 2's record does not match its checksum" in capsys.readouterr().err

    old = [{"job": r["job"], "result": r["result"]} for r in records]  # as saved before checksums
    del old[4]["result"]["winners"]
    path.write_text("".join(json.dumps(r) + "\n" for r in old))
    assert resume() == whole  # not a KeyError in the tables
    assert "line 5: the result has no winners" in capsys.readouterr().err
    assert sorted(json.loads(line)["job"] for line in path.read_text().splitlines()) == list(range(6))


def test_a_full_disk_names_the_file_it_could_not_write(tmp_path: Path) -> None:
    """``[Errno 28] No space left on device`` named no file; /dev/full fails every write as a full disk does."""
    from training.common.progress import JobLog, save_text

    with pytest.raises(OSError, match="No space left on device: '/dev/full'"):
        save_text("/dev/full", "{}")
    log = JobLog(tmp_path / "chunks.progress.jsonl", resume=False)
    log._fh.close()
    log._fh = open("/dev/full", "w", encoding="utf-8")  # noqa: SIM115
    with pytest.raises(OSError, match=f"No space left on device: '{tmp_path / 'chunks.progress.jsonl'}'"):
        log.add(0, {"games": 1})


def test_a_resume_after_the_weights_changed_under_the_same_name_is_refused(tmp_path: Path) -> None:
    """The manifests named the network file, not its contents: a retrained ``net.zip`` resumed into the
    old one's games and the tables mixed the two. Each command now refuses, naming the network."""
    import shutil
    import zipfile

    from training.common.cli import CliError
    from training.matches.card import make_card
    from training.matches.evaluate import evaluate
    from training.matches.protocol import PROTOCOL_2
    from training.matches.tournament import run_tournament

    net = tmp_path / "net.zip"
    shutil.copy(Path(__file__).resolve().parents[1] / "agents" / "shipped" / "ppo_2p.zip", net)
    spec = f"ppo:{net}"
    # the protocol's games against its two cheapest references, two games each (the refusal is what is tested)
    cheap = {**PROTOCOL_2, "references": ["random", "greedy"], "games": {"quick": 2, "full": 2}}
    evaluate(spec, ["random"], 2, [2], out=tmp_path / "e")
    run_tournament([spec, "random"], 2, 2, 1, out=tmp_path / "t", seed=1, progress=False, echo=None)
    make_card(spec, quick=True, echo=None, progress=tmp_path / "c", only=[(2, ())], protocol=cheap)
    saved = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and p != net}
    with zipfile.ZipFile(net, "a") as z:  # the same name, other bytes (it still loads)
        z.writestr("retrained.txt", "new weights")
    runs = {
        "evaluate": lambda: evaluate(spec, ["random"], 2, [2], out=tmp_path / "e", resume=True),
        "tournament": lambda: run_tournament(
            [spec, "random"], 2, 2, 1, out=tmp_path / "t", seed=1, progress=False, echo=None, resume=True
        ),
        "benchmark": lambda: make_card(
            spec, quick=True, echo=None, progress=tmp_path / "c", only=[(2, ())], resume=True, protocol=cheap
        ),
    }
    for command, run in runs.items():
        with pytest.raises(CliError, match=f"network {net} of sha256 .* the weights changed") as refused:
            run()
        assert "\n" not in str(refused.value), command
    assert {p: p.read_bytes() for p in saved} == saved  # nothing of the old runs touched


def test_a_card_played_one_game_at_a_time_keeps_one_manifest_for_its_networks(tmp_path: Path) -> None:
    """``az`` plays another network in each game; the card's manifest names all of them, so the round robin
    (one game a piece, into one folder) resumes the next game instead of being refused."""
    from training.matches.card import make_card
    from training.matches.protocol import PROTOCOL_2

    cheap = {**PROTOCOL_2, "references": ["random", "greedy"], "games": {"quick": 2, "full": 2}}
    make_card("az:sims=2", quick=True, echo=None, progress=tmp_path, only=[(2, ())], protocol=cheap)
    card = make_card(
        "az:sims=2", quick=True, echo=None, progress=tmp_path, only=[(3, ())], resume=True, protocol=cheap
    )
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert set(manifest["networks"]["az:sims=2"]) >= {"az_2p_v5", "az_3_4p_v2"}
    assert [c["config"] for c in card["configs"]] == ["3p base"]


def test_a_resume_after_an_own_agents_code_changed_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifests named an own agent by its spec only: its module edited between two pieces resumed into
    the old code's games. Each command now records the module file's sha256 and refuses, naming the agent;
    the same code resumes."""
    from tests.helpers.agent_package import write_agent_package
    from training.common.cli import CliError
    from training.matches.card import make_card
    from training.matches.evaluate import evaluate
    from training.matches.protocol import PROTOCOL_2
    from training.matches.tournament import run_tournament

    source = """
        import numpy as np
        from agents.base import Agent

        class First(Agent):
            players = (2,)

            def act(self, observation, action_mask, state=None):
                return int(np.flatnonzero(action_mask)[0])
    """
    root = write_agent_package(tmp_path / "code", "resume_bots", source)
    monkeypatch.syspath_prepend(str(root))
    spec = "resume_bots.bots:First"
    cheap = {**PROTOCOL_2, "references": ["random", "greedy"], "games": {"quick": 2, "full": 2}}
    runs = {
        "evaluate": lambda resume: evaluate(spec, ["random"], 2, [2], out=tmp_path / "e", resume=resume),
        "tournament": lambda resume: run_tournament(
            [spec, "random"], 2, 2, 1, out=tmp_path / "t", seed=1, progress=False, echo=None, resume=resume
        ),
        "benchmark": lambda resume: make_card(
            spec,
            quick=True,
            echo=None,
            progress=tmp_path / "c",
            only=[(2, ())],
            resume=resume,
            protocol=cheap,
        ),
    }
    for run in runs.values():
        run(False)
        run(True)  # the same code: resumes
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert manifest["code"][spec]["module"] == "resume_bots.bots"
    saved = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and "code" not in p.parts}
    bots = root / "resume_bots" / "bots.py"
    bots.write_text(bots.read_text() + "\n# tuned\n")  # edited, still loads
    for command, run in runs.items():
        with pytest.raises(
            CliError, match=f"agent {spec} of module file's sha256 .* its code changed"
        ) as refused:
            run(True)
        assert "\n" not in str(refused.value), command
    assert {p: p.read_bytes() for p in saved} == saved


def test_a_piece_that_finished_having_played_no_game_is_not_recorded(tmp_path: Path) -> None:
    """A resume of a finished card (one game at a time: one per game and session) listed empty pieces."""
    from training.common.progress import piece, read_pieces

    with piece(tmp_path, command="benchmark") as entry:
        entry["games"] = 3
    with piece(tmp_path, command="benchmark") as entry:
        entry["games"] = 0
    with pytest.raises(KeyboardInterrupt), piece(tmp_path, command="benchmark") as entry:
        entry["games"] = 0
        raise KeyboardInterrupt  # stopped: its cost counts, whatever it played
    with piece(tmp_path, command="anchors"):
        pass  # a piece that does not count games is recorded
    pieces = [(p["command"], p.get("games"), p["ended"]) for p in read_pieces(tmp_path)]
    assert pieces == [
        ("benchmark", 3, "finished"),
        ("benchmark", 0, "stopped (KeyboardInterrupt)"),
        ("anchors", None, "finished"),
    ]
