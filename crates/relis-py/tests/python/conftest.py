"""Fixtures for the relis package's tests (run by tests/pytest.rs, or by hand after
`maturin develop`): databases in a temporary directory, and a relis-server child process."""

import os
import shutil
import socket
import subprocess
import time

import pytest

import relis


def under_ci():
    return os.environ.get("CI", "") not in ("", "0", "false")


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "relis.db")


@pytest.fixture
def db(path):
    d = relis.open(path)
    yield d
    d.close()


@pytest.fixture
def clock():
    return relis.ManualClock(1_700_000_000_000)


@pytest.fixture
def cdb(path, clock):
    """A file database on a manual clock."""
    d = relis.open(path, clock=clock)
    yield d
    d.close()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def server_bin():
    b = os.environ.get("RELIS_SERVER_BIN") or shutil.which("relis-server")
    if not b:
        if under_ci():
            pytest.fail("RELIS_SERVER_BIN is not set")
        pytest.skip("no relis-server (set RELIS_SERVER_BIN)")
    return b


class Server:
    """relis-server on a free port over the directory `dir` (its file is dir/relis.db)."""

    def __init__(self, dir):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [server_bin(), "--port", str(self.port), "--dir", str(dir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("relis-server did not start")
                time.sleep(0.05)

    def client(self, **kw):
        import redis

        return redis.Redis(port=self.port, **kw)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=20)


@pytest.fixture
def server_on():
    started = []

    def start(dir):
        s = Server(dir)
        started.append(s)
        return s

    yield start
    for s in started:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
