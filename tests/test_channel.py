"""Frames between a page, the warm process and the verifier (channel.py): any size is refused or read, never a
dead run."""

import os
import select
import threading

import pytest

from handbook.verify import channel


@pytest.fixture
def pipe():
    read, write = os.pipe()
    yield read, write
    for fd in (read, write):
        try:
            os.close(fd)
        except OSError:
            pass


def test_frames_arrive_whole_however_they_are_cut(pipe):
    read, write = pipe
    reader = channel.Reader(read, 1 << 20)
    data = channel.encode(["result", 0, "n", {"output": "é" * 1000}]) + channel.encode(["ready"])
    got = []
    for i in range(0, len(data), 7):
        os.write(write, data[i : i + 7])
        got += reader.feed()
    assert got == [["result", 0, "n", {"output": "é" * 1000}], ["ready"]] and not reader.partial


def test_a_frame_over_the_limit_is_refused_before_it_is_read(pipe):
    read, write = pipe
    reader = channel.Reader(read, 1000)
    os.write(write, channel.HEADER.pack(20_000_000) + b"x" * 100)
    with pytest.raises(channel.ChannelError, match="20000000 bytes, over the limit of 1000"):
        reader.feed()


def test_garbage_is_refused(pipe):
    read, write = pipe
    reader = channel.Reader(read, 1000)
    os.write(write, channel.HEADER.pack(3) + b"\xff{[")
    with pytest.raises(channel.ChannelError, match="not JSON"):
        reader.feed()


def test_a_writer_that_never_stops_cannot_keep_the_reader(pipe):
    read, write = pipe
    reader = channel.Reader(read, 1 << 16)
    stop = threading.Event()

    def flood():
        frame = channel.encode(["x" * 1000])
        try:
            while not stop.is_set():
                os.write(write, frame)
        except OSError:
            pass

    threading.Thread(target=flood, daemon=True).start()
    select.select([read], [], [], 10)
    try:
        messages = reader.feed()  # returns: it reads at most about one frame limit at a time
        assert 0 < len(messages) < 200
    finally:
        stop.set()
        os.close(read)


def test_a_blocking_receive_refuses_a_large_frame_and_reports_a_closed_pipe(pipe):
    read, write = pipe
    os.write(write, channel.HEADER.pack(5000))
    with pytest.raises(channel.ChannelError):
        channel.receive(read, 4096)
    os.close(write)
    with pytest.raises(EOFError):
        channel.receive(read, 4096)
