"""A minimal RESP3 client for the generators in tools/ (no third-party packages)."""

import socket


def encode(args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


class Conn:
    """One connection speaking RESP3 (HELLO 3 is sent first)."""

    def __init__(self, port, host="127.0.0.1"):
        self.sock = socket.create_connection((host, port))
        self.buf = b""
        self.call("HELLO", "3")

    def _fill(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise EOFError("connection closed")
        self.buf += data

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _bytes(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read_raw(self):
        """The next reply as its exact bytes."""
        out = []
        self._read(out)
        return b"".join(out)

    def _read(self, out):
        line = self._line()
        out.append(line + b"\r\n")
        kind, rest = line[:1], line[1:]
        if kind in b"$=!":
            n = int(rest)
            if n >= 0:
                out.append(self._bytes(n) + b"\r\n")
            return
        if kind in b"*~>":
            for _ in range(max(int(rest), 0)):
                self._read(out)
            return
        if kind in b"%|":
            for _ in range(2 * int(rest)):
                self._read(out)

    def call_raw(self, *args):
        self.sock.sendall(encode(args))
        return self.read_raw()

    def call(self, *args):
        return parse(self.call_raw(*args))


def parse(raw):
    """Parses one RESP3 reply into Python values (maps become lists of pairs, to keep order)."""
    value, rest = _parse(raw)
    assert not rest
    return value


def _parse(b):
    line, rest = b.split(b"\r\n", 1)
    kind, body = line[:1], line[1:]
    if kind in b"+-":
        return body.decode(), rest
    if kind == b":":
        return int(body), rest
    if kind == b"_":
        return None, rest
    if kind in b"$=!":
        n = int(body)
        if n < 0:
            return None, rest
        return rest[:n].decode(), rest[n + 2:]
    if kind in b"*~>":
        items = []
        for _ in range(max(int(body), 0)):
            v, rest = _parse(rest)
            items.append(v)
        return items, rest
    if kind == b"%":
        items = []
        for _ in range(int(body)):
            k, rest = _parse(rest)
            v, rest = _parse(rest)
            items.append((k, v))
        return items, rest
    raise ValueError(line)
