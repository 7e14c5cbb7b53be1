"""uvicorn's httptools protocol with its request heads bounded: a head over ``MAX_HEAD_BYTES`` is
answered 431 and the connection closed as soon as that much of it has arrived.

httptools gathers a header's pieces until the header ends (one of 300 MB was read whole, for
minutes, and left the process hundreds of MB larger), and neither it nor uvicorn sets a limit, so
this protocol meters the bytes it feeds the parser while a head is open: from the connection's
start, and from the end of each request, to the end of the next head. While a head is open it
feeds a long chunk in ``STEP``-byte pieces and counts a piece only if the head was open before
and after it, so the count is exact to within one piece and a body never counts. (A head that
starts inside a piece fed while no head was open, a pipelined request's after a body, is counted
from the next piece on: it may run one read past the limit before it is refused.)
Importing this module fails where httptools is not installed; ``heads.bounded_http`` then picks h11.
"""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from grapharc.server.api.problems import problem
from grapharc.server.heads import MAX_HEAD_BYTES

STEP = 8 * 1024
"""The most bytes fed to the parser at once while a head is open: the count's resolution."""
TOO_LARGE = 431


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """The httptools protocol, refusing a request head over ``MAX_HEAD_BYTES`` (see the module)."""

    _in_head = True
    _head_bytes = 0

    def data_received(self, data: bytes) -> None:
        """Feed ``data`` to the parser, metering it while a head is open; refuse an oversized head."""
        if self.transport.is_closing():  # refused: what still arrives is not read
            return
        while self._in_head and len(data) > STEP:
            piece, data = data[:STEP], data[STEP:]
            if not self._feed(piece):
                return
        if data:
            self._feed(data)

    def _feed(self, piece: bytes) -> bool:
        """Parse ``piece`` as uvicorn does and count it if it was all head; whether to feed the rest
        of the chunk (not after a refusal, an error uvicorn answered, or an upgrade, after which
        uvicorn drops the rest of a chunk too)."""
        was_in_head = self._in_head
        super().data_received(piece)
        if self.transport.is_closing() or self.parser.should_upgrade():
            return False
        if was_in_head and self._in_head:
            self._head_bytes += len(piece)
            if self._head_bytes > MAX_HEAD_BYTES:
                self._refuse()
                return False
        return True

    def on_headers_complete(self) -> None:
        """The head ended: stop metering until the request ends."""
        self._in_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        """The request ended: the next head starts here."""
        self._in_head, self._head_bytes = True, 0
        super().on_message_complete()

    def _refuse(self) -> None:
        """Answer 431 with a problem document and close the connection (the rest is not read)."""
        response = problem(TOO_LARGE, f"the request's head (its request line and headers) is over the "
                                      f"limit of {MAX_HEAD_BYTES} bytes",
                           hint="send fewer or shorter headers, and a shorter URL")
        head = [STATUS_LINE[TOO_LARGE]]
        head += [name + b": " + value + b"\r\n"
                 for name, value in [*self.server_state.default_headers, *response.raw_headers]]
        self.transport.write(b"".join([*head, b"connection: close\r\n\r\n", response.body]))
        self.transport.close()
