"""The app's HTTP connections: uvicorn's h11 protocol with JSON refusals and limits on what a client may hold.

Why apart from :mod:`training.app.server`: these guards act on connections, before a request
exists (the app's own guards, :class:`training.app.server.Guard`, see whole requests). uvicorn
gives a connection as long as it likes to send its request head, answers a complete head of any
size, and lets one client open as many connections as the machine allows; a server left running
on a network must do none of these (a few slow clients would hold it). So, here:

* a request head (request line and headers) must arrive in full within :data:`HEAD_TIMEOUT_S`
  of the connection opening or of the previous answer, else the connection is closed (408 if
  part of a head came);
* a head over :data:`MAX_HEAD` bytes gets 431, whether it arrives in pieces or at once;
* one client address holds at most :data:`MAX_CONNECTIONS_PER_CLIENT` connections; one more is
  answered 429 and closed;
* a request h11 cannot parse gets a JSON 4xx naming the fault, not uvicorn's plain-text 400.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Largest request line and headers together (bytes); beyond it a request gets 431.
MAX_HEAD = 64 * 1024
#: Seconds a request head may take to arrive (from the connection or the last answer).
HEAD_TIMEOUT_S = 10.0
#: Connections one client address may hold open at once (a browser holds about 6, a live page 1 more).
MAX_CONNECTIONS_PER_CLIENT = 64


@dataclass
class ConnectionLimits:
    """One server's connection limits and its open connections by client address (event loop only)."""

    head_timeout_s: float = HEAD_TIMEOUT_S
    per_client: int = MAX_CONNECTIONS_PER_CLIENT
    open: Counter[str] = field(default_factory=Counter)


def head_size(event: h11.Request) -> int:
    """Bytes of a request's head on the wire (request line, headers, blank line), near enough."""
    line = len(event.method) + len(event.target) + len(b" HTTP/1.1\r\n") + 1
    return line + sum(len(n) + len(v) + 4 for n, v in event.headers.raw_items()) + 2


class HeadConnection(h11.Connection):
    """h11's connection, keeping the error it found (to say it) and telling its protocol of each head."""

    error: h11.RemoteProtocolError | None = None
    protocol: JsonH11Protocol | None = None

    def next_event(self) -> Any:
        try:
            event = super().next_event()
            if isinstance(event, h11.Request):
                if head_size(event) > MAX_HEAD:  # h11 caps only a head still arriving, not one come whole
                    raise h11.RemoteProtocolError("head too large", error_status_hint=431)
                if self.protocol is not None:
                    self.protocol.head_arrived()
            return event
        except h11.RemoteProtocolError as exc:
            self.error = exc
            raise


def _answer(status: int, message: str) -> bytes:
    """A whole JSON error answer that closes the connection, as raw bytes."""
    body = json.dumps({"error": message}).encode()
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class JsonH11Protocol(H11Protocol):
    """uvicorn's h11 protocol under :class:`ConnectionLimits`, every refusal JSON (module doc).

    A server gets its own subclass (:func:`protocol_for`), whose ``limits`` count its connections.
    """

    limits: ConnectionLimits = ConnectionLimits()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = HeadConnection(h11.SERVER, MAX_HEAD)
        self.conn.protocol = self
        self.head_timer: Any = None
        self.head_bytes = 0
        self.address: str | None = None

    # -- the limits ------------------------------------------------------------------
    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.address = self.client[0] if self.client else ""
        self.limits.open[self.address] += 1
        if self.limits.open[self.address] > self.limits.per_client:
            self.refuse(
                HTTPStatus.TOO_MANY_REQUESTS,
                f"{self.limits.per_client} connections are open from {self.address}: close some first",
            )
            return
        self.arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.address is not None:
            self.limits.open[self.address] -= 1
            if self.limits.open[self.address] <= 0:
                del self.limits.open[self.address]
            self.address = None
        self.disarm_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.head_timer is not None:
            self.head_bytes += len(data)
        super().data_received(data)

    def on_response_complete(self) -> None:
        self.arm_head_timer()  # first: a pipelined request already here disarms it in the call below
        super().on_response_complete()

    def arm_head_timer(self) -> None:
        self.disarm_head_timer()
        self.head_bytes = 0
        self.head_timer = self.loop.call_later(self.limits.head_timeout_s, self.head_late)

    def disarm_head_timer(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def head_arrived(self) -> None:
        self.disarm_head_timer()

    def head_late(self) -> None:
        """The head deadline passed: close the connection (saying why if part of a head came)."""
        self.head_timer = None
        if self.transport.is_closing() or (self.cycle is not None and not self.cycle.response_complete):
            return
        if self.head_bytes:
            self.refuse(
                HTTPStatus.REQUEST_TIMEOUT,
                f"the request head did not arrive within {self.limits.head_timeout_s:g} s",
            )
        else:
            self.transport.close()

    def refuse(self, status: int, message: str) -> None:
        """Answer ``status`` with ``message`` as JSON and close (only close when an answer is under way)."""
        self.disarm_head_timer()
        if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            self.transport.write(_answer(status, message))
        self.transport.close()

    # -- what h11 cannot parse ---------------------------------------------------------
    def send_400_response(self, msg: str) -> None:
        """Answer a request h11 refused (malformed framing, a head over MAX_HEAD) with JSON, naming the fault."""
        found = self.conn.error
        status = getattr(found, "error_status_hint", 400)
        status = status if 400 <= status < 500 else 400  # h11 hints 501 for an unknown Transfer-Encoding
        if status == HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE:
            why = f"the request line and headers are over {MAX_HEAD} bytes"
        else:
            why = str(found) if found is not None and str(found) else msg.rstrip(".")
            why = re.sub(r"bytearray\((b'.*?'|b\".*?\")\)", lambda m: m.group(1)[1:], why)[:200]
        self.refuse(status, f"malformed HTTP request: {why}")


def protocol_for(limits: ConnectionLimits) -> type[JsonH11Protocol]:
    """A :class:`JsonH11Protocol` of one server's own, counting its connections in ``limits``."""
    return type("JsonH11Protocol", (JsonH11Protocol,), {"limits": limits})
