"""The search speed benchmark (training/speed/search.py): a figure per game asked for, bad counts refused."""

from __future__ import annotations

import pytest

from training.speed import search as bench


def test_it_times_each_game_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    out = bench.main(["--sims", "8", "--positions", "2", "--repeats", "2", "--games", "2p", "4p"])
    assert set(out) == {"2p", "4p"} and all(ms > 0 for ms in out.values())
    printed = capsys.readouterr().out
    assert "az:sims=8,stop=0" in printed and "4p" in printed and "2p-modules" not in printed


@pytest.mark.parametrize("flag", ["--sims", "--positions", "--repeats"])
def test_a_count_below_one_is_refused_naming_it(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench.main([flag, "0"])
    assert exit_info.value.code == 2 and f"{flag} must be at least 1" in capsys.readouterr().err


def test_the_cpu_clock_times_the_process_not_the_wall(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--clock cpu`` reads ``time.process_time`` (a loaded machine's other jobs do not count), and says so."""
    read: list[str] = []
    monkeypatch.setitem(bench.CLOCKS, "cpu", lambda: read.append("cpu") or float(len(read)))
    out = bench.main(["--sims", "4", "--positions", "2", "--repeats", "1", "--games", "2p", "--clock", "cpu"])
    assert len(read) == 4 and out["2p"] == 1000.0  # two positions, one search each, 1 "second" apiece
    assert "cpu ms a move" in capsys.readouterr().out
