"""Frames over pipes: a 4-byte length, then that many bytes of JSON (or, from the verifier to the warm process
only, a pickle). The reader never holds more than one frame's limit: a longer frame is refused before it is read.

Used between a page and the warm process (JSON both ways: the warm process never runs code a page chose) and
between the warm process and the verifier.
"""

from __future__ import annotations

import json
import os
import struct

HEADER = struct.Struct(">I")


class ChannelError(Exception):
    """What came over the channel is not a frame its writer could have sent: too large, or not JSON."""


def encode(message) -> bytes:
    data = json.dumps(message, ensure_ascii=False).encode("utf-8", errors="surrogatepass")
    return HEADER.pack(len(data)) + data


def write(fd: int, data: bytes) -> None:
    """Write all of `data` (blocking)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def send(fd: int, message) -> None:
    write(fd, encode(message))


def read_exactly(fd: int, size: int) -> bytes:
    """`size` bytes (blocking); EOFError when the writer is gone first."""
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive_bytes(fd: int, limit: int) -> bytes:
    """One frame's bytes (blocking)."""
    (size,) = HEADER.unpack(read_exactly(fd, HEADER.size))
    if size > limit:
        raise ChannelError(f"a frame of {size} bytes, over the limit of {limit}")
    return read_exactly(fd, size)


def receive(fd: int, limit: int):
    return _decode(receive_bytes(fd, limit))


def _decode(data: bytes):
    try:
        return json.loads(data.decode("utf-8", errors="surrogatepass"))
    except ValueError as exc:
        raise ChannelError(f"a frame that is not JSON ({exc})") from None


class Reader:
    """Frames from a non-blocking pipe, as they arrive; `feed` reads what is there now."""

    def __init__(self, fd: int, limit: int):
        self.fd, self.limit = fd, limit
        self.buffer = bytearray()
        self.eof = False
        os.set_blocking(fd, False)

    def feed(self) -> list:
        """Read what the pipe holds now; return the complete frames in it. ChannelError on a bad frame."""
        while not self.eof:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                self.eof = True
            self.buffer += chunk
            if len(self.buffer) > self.limit + HEADER.size:
                break  # enough for any frame: a writer that keeps writing cannot keep the reader here
            if len(self.buffer) >= HEADER.size and HEADER.unpack_from(self.buffer)[0] > self.limit:
                break  # refused below, before reading more of it
        messages = []
        while len(self.buffer) >= HEADER.size:
            (size,) = HEADER.unpack_from(self.buffer)
            if size > self.limit:
                raise ChannelError(f"a frame of {size} bytes, over the limit of {self.limit}")
            if len(self.buffer) < HEADER.size + size:
                break
            data = bytes(self.buffer[HEADER.size : HEADER.size + size])
            del self.buffer[: HEADER.size + size]
            messages.append(_decode(data))
        return messages

    @property
    def partial(self) -> bool:
        """Bytes of an unfinished frame are waiting."""
        return bool(self.buffer)
