"""A TCP proxy on 127.0.0.1 in front of a PostgreSQL server, for faults no real server makes on cue.

It counts what the server sends (bytes, and answers: one ReadyForQuery per statement's round
trip), cuts a connection after the server has answered a chosen statement (it committed; its
client never hears so), and can refuse new connections (the server unreachable).
"""

from __future__ import annotations

import asyncio
import contextlib
import urllib.parse
from typing import Self


class Proxy:
    """Forwards connections to the server of `url`; `url` of the proxy is the same database."""

    def __init__(self, url: str) -> None:
        self._target = urllib.parse.urlsplit(url)
        self._server: asyncio.Server | None = None
        self._marker: bytes | None = None
        self._cut: asyncio.Future[None] | None = None
        self.refusing = False
        """True: new connections are closed at once, as by a server that is down."""
        self.received = 0
        """Bytes the server sent, on every connection."""
        self.answers = 0
        """ReadyForQuery messages the server sent: one per round trip that ends a statement."""
        self.url = ""

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        user = self._target.netloc.rpartition("@")[0]
        query = "&".join(q for q in (self._target.query, "sslmode=disable") if q)
        self.url = urllib.parse.urlunsplit(
            self._target._replace(netloc=f"{user}@127.0.0.1:{port}", query=query)
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()

    def cut_after(self, marker: bytes) -> asyncio.Future[None]:
        """Cut the connection whose client next sends `marker`, once the server has answered it
        (the answer is dropped); the future is done when it is cut."""
        self._marker = marker
        self._cut = asyncio.get_running_loop().create_future()
        return self._cut

    async def _serve(self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        if self.refusing:
            client_out.close()
            return
        host, port = self._target.hostname or "127.0.0.1", self._target.port or 5432
        server_in, server_out = await asyncio.open_connection(host, port)
        cutting = asyncio.Event()
        up = asyncio.ensure_future(self._up(client_in, server_out, cutting))
        down = asyncio.ensure_future(self._down(server_in, client_out, cutting))
        await asyncio.wait([up, down], return_when=asyncio.FIRST_COMPLETED)
        for task in (up, down):
            task.cancel()
        for writer in (client_out, server_out):
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        if cutting.is_set() and self._cut is not None and not self._cut.done():
            self._cut.set_result(None)

    async def _up(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, cutting: asyncio.Event
    ) -> None:
        """Client to server, as it comes; the chunk holding the marker arms the cut."""
        while data := await reader.read(65536):
            if self._marker is not None and self._marker in data:
                self._marker = None
                cutting.set()
            writer.write(data)
            await writer.drain()

    async def _down(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, cutting: asyncio.Event
    ) -> None:
        """Server to client, message by message; once cutting, up to the answer's end, then nothing."""
        buffer = b""
        while data := await reader.read(65536):
            self.received += len(data)
            buffer += data
            whole = 0
            while len(buffer) - whole >= 5:
                end = whole + 1 + int.from_bytes(buffer[whole + 1 : whole + 5], "big")
                if end > len(buffer):
                    break
                kind, whole = buffer[whole : whole + 1], end
                if kind == b"Z":
                    self.answers += 1
                    if cutting.is_set():
                        return  # the statement committed; its answer is never delivered
            if not cutting.is_set():
                writer.write(buffer[:whole])
                await writer.drain()
            buffer = buffer[whole:]
