"""The shared CLI error path: user-input errors are one line and exit status 2, bugs keep their traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from training.common.cli import CliError, run_cli


def _raiser(exc: BaseException):
    def main(argv):
        raise exc

    return main


@pytest.mark.parametrize(
    "exc", [CliError("--games must be positive, got 0"), ValueError("bad spec 'x'"), OSError("no file")]
)
def test_user_errors_print_one_line_and_exit_2(exc, capsys):
    assert run_cli(_raiser(exc), [], prog="prog") == 2
    err = capsys.readouterr().err
    assert err == f"prog: error: {exc}\n"


def test_multi_line_message_is_cut_to_its_first_line(capsys):
    assert run_cli(_raiser(ValueError("first\nsecond")), [], prog="p") == 2
    assert capsys.readouterr().err == "p: error: first\n"


def test_debug_flag_reraises_and_is_not_passed_on():
    seen = []

    def main(argv):
        seen.append(argv)
        raise CliError("boom")

    with pytest.raises(CliError):
        run_cli(main, ["--games", "3", "--debug"])
    assert seen == [["--games", "3"]]


def test_bugs_keep_their_traceback():
    with pytest.raises(ZeroDivisionError):
        run_cli(_raiser(ZeroDivisionError("bug")), [])


def test_result_is_passed_through():
    assert run_cli(lambda argv: None, []) == 0
    assert run_cli(lambda argv: 3, []) == 3


def test_play_cli_bad_agent_spec_is_one_line():
    proc = subprocess.run(
        [sys.executable, "-m", "training.play", "--agents", "grredy", "random"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "grredy" in lines[0], proc.stderr


SIGTERM_SCRIPT = """
import sys, time
from training.common.cli import run_cli

def main(argv):
    try:
        print("started", flush=True)
        time.sleep(60)
    finally:
        open(sys.argv[1], "w").write("cleaned up")

sys.exit(run_cli(main, [], prog="p"))
"""


def test_sigterm_unwinds_through_finally_like_ctrl_c(tmp_path):
    marker = tmp_path / "finally"
    proc = subprocess.Popen(
        [sys.executable, "-c", SIGTERM_SCRIPT, str(marker)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "started"
        proc.terminate()
        assert proc.wait(timeout=30) == 143  # 128 + SIGTERM, as a shell reports it
    finally:
        proc.kill()
    assert marker.read_text() == "cleaned up"


def test_run_cli_puts_the_previous_sigterm_handler_back():
    import signal

    before = signal.getsignal(signal.SIGTERM)
    seen = []
    run_cli(lambda argv: seen.append(signal.getsignal(signal.SIGTERM)), [], prog="p")
    assert seen and seen[0] is not before  # the CLI ran with its own handler
    assert signal.getsignal(signal.SIGTERM) is before
