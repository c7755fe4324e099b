"""Connecting to Ray: a private local runtime, or a cluster by ``--address``, the same way in every command.

Why one function: three commands (tournaments and evaluations through :mod:`training.common.jobs`,
search training, RLlib training) join Ray, and each needs the same three things: Ray 2.5x clusters
started by ``ray start`` use token authentication (a client must set ``RAY_AUTH_MODE=token`` and
hold the cluster's token), so a refused connection says what to set instead of a traceback;
``ray.init`` replaces the SIGTERM and SIGINT handlers, which are put back so that a stopped run
still exits 143/130 after saving its work; and ``--address`` reaches a running cluster.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from training.common.cli import CliError

#: where Ray looks for the cluster's token when neither RAY_AUTH_TOKEN nor RAY_AUTH_TOKEN_PATH is set
DEFAULT_TOKEN = Path.home() / ".ray" / "auth_token"

AUTH_HELP = (
    "the cluster uses token authentication (ray start does, from Ray 2.5x): on this machine set "
    "RAY_AUTH_MODE=token and give it the cluster's token, either by copying the head's ~/.ray/auth_token "
    "here (or naming the file in RAY_AUTH_TOKEN_PATH) or by setting RAY_AUTH_TOKEN to its contents "
    "(docs/tournaments.md, 'A Ray cluster')"
)


def token_available() -> bool:
    """Whether this machine holds a Ray token (the environment, the named file or the default one)."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return True
    named = os.environ.get("RAY_AUTH_TOKEN_PATH")
    return Path(named).is_file() if named else DEFAULT_TOKEN.is_file()


def _auth_refused(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is Ray refusing the token."""
    while exc is not None:
        if type(exc).__name__ == "AuthenticationError" or "InvalidAuthToken" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


def use_token_auth(address: str | None) -> None:
    """Before Ray is imported (it reads ``RAY_AUTH_MODE`` then): with ``address`` and no mode set, switch
    token authentication on where a token is at hand (a cluster without authentication accepts such a
    client too, and one started by ``ray start`` needs it)."""
    if address is not None and "RAY_AUTH_MODE" not in os.environ and token_available():
        os.environ["RAY_AUTH_MODE"] = "token"


def connect_ray(workers: int | None, address: str | None, **init_options: Any) -> bool:
    """Start a private Ray runtime of ``workers`` CPUs, or join the cluster at ``address``.

    Returns whether this call connected (and so must call ``ray.shutdown()``): ``False`` when Ray is
    already initialised in this process. With ``address``, :func:`use_token_auth` (which only works
    if Ray was not imported before it: commands call it when they check ``--backend``). The process's
    SIGTERM and SIGINT handlers are the same afterwards.
    """
    import ray

    if ray.is_initialized():
        return False
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    options = {"include_dashboard": False, "log_to_driver": False, **init_options}
    try:
        if address is None:
            # inherited by the runtime's processes: its watcher finds them by it
            os.environ[MARK] = str(os.getpid())
            ray.init(num_cpus=workers, **options)
        else:
            ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        if address is not None and _auth_refused(exc):
            raise CliError(f"--address {address}: the Ray cluster refused this client: {AUTH_HELP}") from None
        if address is not None:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CliError(f"--address {address}: could not join the Ray cluster ({first})") from None
        raise
    finally:
        os.environ.pop(MARK, None)  # the runtime has it; later children of this process are not Ray's
        for sig, handler in handlers.items():
            if handler is not None:
                signal.signal(sig, handler)
    if address is None:
        watch_runtime()
    return True


def watch_runtime() -> None:
    """Have a small process end this process's private Ray runtime if this process is killed (SIGKILL).

    Why: the runtime's processes (GCS, raylet, workers) are not ended with a killed driver; they
    lingered for 40 s and more. The watcher polls this process and, once it is gone, kills every
    process that names the runtime's session folder, and their children. Linux only (``/proc``).
    """
    if not sys.platform.startswith("linux"):
        return
    import ray

    try:
        session = ray._private.worker._global_node.get_session_dir_path()  # noqa: SLF001
    except AttributeError:
        return
    # run by its path, not as part of the package: it imports the standard library only, so it is
    # watching within a fraction of a second, and says so before the run goes on
    watcher = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("ray_reaper.py")), str(os.getpid()), session],
        start_new_session=True,  # not in the driver's process group: a Ctrl-C there does not end it
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert watcher.stdout is not None
    watcher.stdout.readline()  # "watching": its first note of the runtime's processes is taken
    watcher.stdout.close()


from training.common.ray_reaper import MARK, below, marked, processes, reap  # noqa: E402 (the watcher's, shared with the tests)

__all__ = [
    "AUTH_HELP",
    "MARK",
    "below",
    "connect_ray",
    "marked",
    "processes",
    "reap",
    "token_available",
    "use_token_auth",
    "watch_runtime",
]
