"""A real HTTP server on 127.0.0.1 for WebFetch's tests, in a thread: fixed
routes (pages, redirects, a trickle, a large body, binary), and a record
of what each request asked for (path, Host header) and how often."""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from kit import png

HTML = """<!doctype html><html><head><title>The  Page</title>
<style>body { color: red }</style><script>alert("hidden")</script></head>
<body><h1>Heading</h1><p>Some <b>bold</b> text and <a href="https://example.com/x">a link</a>.</p>
<ul><li>one</li><li>two</li></ul><img src="data:image/png;base64,AAAA"></body></html>"""


@dataclass
class Record:
    hits: Counter[str] = field(default_factory=Counter)
    hosts: list[str] = field(default_factory=list)
    sni: list[str] = field(default_factory=list)


Route = Callable[[BaseHTTPRequestHandler], None]


def _send(h: BaseHTTPRequestHandler, status: int, body: bytes, kind: str | None,
          **headers: str) -> None:
    h.send_response(status)
    if kind is not None:
        h.send_header("Content-Type", kind)
    for name, value in headers.items():
        h.send_header(name.replace("_", "-"), value)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def _trickle(h: BaseHTTPRequestHandler) -> None:
    """Headers at once, then a byte every 50 ms for ten seconds: no read
    timeout ever fires, only the total one."""
    h.send_response(200)
    h.send_header("Content-Type", "text/plain")
    h.end_headers()
    for _ in range(200):
        try:
            h.wfile.write(b"x")
            h.wfile.flush()
        except OSError:
            return
        time.sleep(0.05)


def _big(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/plain")
    h.end_headers()
    line = b"0123456789 a line of a large text body, repeated\n"
    try:
        for _ in range(40_000):  # 2 MB, streamed without a length
            h.wfile.write(line)
    except OSError:
        return


def gzipped(data: bytes, times: int = 1, wbits: int = 31) -> bytes:
    """``data`` compressed ``times`` over (gzip; raw deflate with ``wbits=-15``)."""
    for _ in range(times):
        z = zlib.compressobj(9, zlib.DEFLATED, wbits)
        data = z.compress(data) + z.flush()
    return data


#: HTML that keeps a converter busy: markdownify's regexes are quadratic in
#: a run of blanks; nested quotes prefix every line once per level
PRE_BLANKS = b"<html><body><pre>" + b" " * 200_000 + b"x</pre></body></html>"
NESTED = b"<html><body>" + b"<div>" * 100_000 + b"deep" + b"</div>" * 100_000 + b"</body></html>"
AMPLIFIED = (b"<html><body>" + b"<blockquote>" * 100 + b"<p>a</p>" * 80_000
             + b"</blockquote>" * 100 + b"</body></html>")
LONG_TITLE = b"<html><head><title>" + b"T" * 1_000_000 + b"</title></head><body>x</body></html>"


def _coded(h: BaseHTTPRequestHandler, body: bytes, coding: str) -> None:
    _send(h, 200, body, "text/plain", Content_Encoding=coding)


def _count(h: BaseHTTPRequestHandler, record: Record) -> None:
    _send(h, 200, f"visit {record.hits['/count']}\n".encode(), "text/plain")


def routes(record: Record) -> dict[str, Route]:
    return {
        "/page.html": lambda h: _send(h, 200, HTML.encode(), "text/html; charset=utf-8"),
        "/plain.txt": lambda h: _send(h, 200, b"hello\nworld\n", "text/plain"),
        "/latin1.txt": lambda h: _send(h, 200, "caf\u00e9\n".encode("latin-1"),
                                       "text/plain; charset=iso-8859-1"),
        "/data.json": lambda h: _send(h, 200, json.dumps({"a": [1, 2]}).encode(),
                                      "application/json"),
        "/image.png": lambda h: _send(h, 200, png(), "image/png"),
        "/unlabelled": lambda h: _send(h, 200, b"\x00\x01binary\xff", None),
        "/missing": lambda h: _send(h, 404, b"<h1>Not here</h1>", "text/html"),
        "/same": lambda h: _send(h, 302, b"", "text/plain", Location="/plain.txt"),
        "/other": lambda h: _send(h, 301, b"", "text/plain",
                                  Location="https://elsewhere.example/page?q=1"),
        "/metadata": lambda h: _send(h, 302, b"", "text/plain",
                                     Location="http://169.254.169.254/latest/meta-data/"),
        "/loopback": lambda h: _send(h, 307, b"", "text/plain", Location="http://127.0.0.2/x"),
        "/loop": lambda h: _send(h, 302, b"", "text/plain", Location="/loop"),
        "/userinfo": lambda h: _send(h, 302, b"", "text/plain",
                                     Location="http://user:pw@127.0.0.1/plain.txt"),
        "/slow": _trickle,
        "/big": _big,
        "/count": lambda h: _count(h, record),
        "/gzip": lambda h: _coded(h, gzipped(b"squeezed text\n"), "gzip"),
        "/deflate-raw": lambda h: _coded(h, gzipped(b"raw deflate\n", wbits=-15), "deflate"),
        "/gzip-zeros": lambda h: _coded(h, gzipped(b"0" * 50_000_000), "gzip"),
        "/gzip-twice": lambda h: _coded(h, gzipped(b"0" * 50_000_000, times=2), "gzip, gzip"),
        "/brotli": lambda h: _coded(h, b"\x0b\x02\x80hello\x03", "br"),
        "/corrupt-gzip": lambda h: _coded(h, b"\x1f\x8b\x08\x00garbage-not-deflate", "gzip"),
        "/charset-punycode": lambda h: _send(h, 200, b"a" * 200_000 + b"-" + b"b" * 200_000,
                                             "text/plain; charset=punycode"),
        "/charset-idna": lambda h: _send(h, 200, b"plain words\n", "text/plain; charset=idna"),
        "/charset-rot13": lambda h: _send(h, 200, b"plain words\n", "text/plain; charset=rot13"),
        "/pre-blanks": lambda h: _send(h, 200, PRE_BLANKS, "text/html"),
        "/nested": lambda h: _send(h, 200, NESTED, "text/html"),
        "/amplified": lambda h: _send(h, 200, AMPLIFIED, "text/html"),
        "/long-title": lambda h: _send(h, 200, LONG_TITLE, "text/html"),
    }


def _handler(record: Record, table: dict[str, Route]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            record.hits[path] += 1
            record.hosts.append(self.headers.get("Host", ""))
            route = table.get(path)
            if route is None:
                _send(self, 404, b"no such route", "text/plain")
            else:
                route(self)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@dataclass
class LocalWeb:
    port: int
    record: Record
    scheme: str = "http"

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"


@contextmanager
def serve(cert: tuple[str, str] | None = None) -> Iterator[LocalWeb]:
    """The server, on a free port of 127.0.0.1 — over TLS with ``cert``
    (certificate and key files), recording the server name each client
    sent."""
    record = Record()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(record, routes(record)))
    server.daemon_threads = True
    if cert is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*cert)

        def note_name(sock: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
            record.sni.append(name or "")

        context.sni_callback = note_name
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield LocalWeb(server.server_address[1], record, "https" if cert else "http")
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def first_bytes() -> Iterator[tuple[int, list[bytes]]]:
    """A bare TCP listener that keeps the first bytes each client sends and
    hangs up: what a client speaks (TLS starts with 0x16)."""
    seen: list[bytes] = []
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)

    def accept() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(5)
            try:
                seen.append(conn.recv(16))
            except OSError:
                seen.append(b"")

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], seen
    finally:
        listener.close()
        thread.join(5)
