"""The host-side domain proxy, exercised with real sockets: a real upstream
HTTP server, real CONNECT tunnels, real unix sockets."""

from __future__ import annotations

import asyncio
import http.server
import ipaddress
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import DomainProxy, NetworkPolicy
from sandbox.proxy import _split_host_port, classify


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"hello {self.path} host={self.headers.get('Host')}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()


def _request(port: int, raw: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(raw)
        chunks = []
        while data := s.recv(65536):
            chunks.append(data)
    return b"".join(chunks)


def _proxy(allowed: tuple[str, ...], **kw: object) -> DomainProxy:
    return DomainProxy(NetworkPolicy(allowed_domains=allowed), None, **kw)  # type: ignore[arg-type]


def test_plain_http_to_an_allowed_host_is_forwarded(upstream: int) -> None:
    with _proxy(("localhost",), block_local_targets=False) as proxy:
        assert proxy.port is not None
        reply = _request(proxy.port, f"GET http://localhost:{upstream}/x?y=1 HTTP/1.1\r\n"
                                     f"Host: localhost:{upstream}\r\n\r\n".encode())
    assert reply.startswith((b"HTTP/1.0 200", b"HTTP/1.1 200"))
    assert b"hello /x?y=1" in reply
    assert proxy.events[-1].allowed and proxy.events[-1].host == "localhost"


def test_connect_tunnels_to_an_allowed_host(upstream: int) -> None:
    with _proxy(("localhost",), block_local_targets=False) as proxy:
        assert proxy.port is not None
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as s:
            s.sendall(f"CONNECT localhost:{upstream} HTTP/1.1\r\n\r\n".encode())
            assert s.recv(1024).startswith(b"HTTP/1.1 200")
            s.sendall(b"GET /tunnel HTTP/1.0\r\nHost: x\r\n\r\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
    assert b"hello /tunnel" in data


@pytest.mark.parametrize(
    "request_line",
    ["CONNECT evil.test:443 HTTP/1.1", "GET http://evil.test/steal HTTP/1.1",
     "CONNECT sub.example.com.evil.test:443 HTTP/1.1"],
)
def test_a_host_not_on_the_allowlist_gets_a_403_naming_the_setting(request_line: str) -> None:
    with _proxy(("example.com",)) as proxy:
        assert proxy.port is not None
        reply = _request(proxy.port, f"{request_line}\r\nHost: evil.test\r\n\r\n".encode())
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 403")
    assert b"evil.test" in body
    assert b"sandbox.network.allowedDomains" in body
    assert not proxy.events[-1].allowed


def test_the_decision_is_made_before_any_dns_lookup() -> None:
    """DNS exfiltration: a blocked name is never resolved, so nothing leaks
    through the resolver either (no such name exists; a lookup would fail
    with a resolution error instead of the policy's reason)."""
    with _proxy(("example.com",)) as proxy:
        assert proxy.port is not None
        _request(proxy.port, b"CONNECT c2VjcmV0.exfil.invalid:443 HTTP/1.1\r\n\r\n")
    assert proxy.events[-1].reason == "not in sandbox.network.allowedDomains"


def test_an_allowed_name_that_resolves_to_loopback_is_refused(upstream: int) -> None:
    """DNS rebinding: an allowed domain must not become a door to the
    host's own services."""
    with _proxy(("localhost",)) as proxy:
        assert proxy.port is not None
        reply = _request(proxy.port, f"CONNECT localhost:{upstream} HTTP/1.1\r\n\r\n".encode())
    assert reply.startswith(b"HTTP/1.1 403")
    assert b"non-public address" in reply
    assert b"never reachable" in reply and b"add \"localhost\"" not in reply


@pytest.mark.parametrize(
    "raw",
    [b"garbage\r\n\r\n", b"GET /relative HTTP/1.1\r\nHost: x\r\n\r\n",
     b"GET ftp://x/ HTTP/1.1\r\n\r\n", b"\xff\xfe\r\n\r\n"],
)
def test_malformed_requests_get_a_400_and_the_proxy_keeps_serving(raw: bytes) -> None:
    with _proxy(("example.com",)) as proxy:
        assert proxy.port is not None
        assert _request(proxy.port, raw).startswith(b"HTTP/1.1 400")
        assert _request(proxy.port, b"CONNECT nope.test:443 HTTP/1.1\r\n\r\n").startswith(
            b"HTTP/1.1 403")


def test_a_client_that_hangs_up_mid_request_does_not_stop_the_proxy() -> None:
    with _proxy(("example.com",)) as proxy:
        assert proxy.port is not None
        with socket.create_connection(("127.0.0.1", proxy.port)) as s:
            s.sendall(b"CONNECT exam")
        assert _request(proxy.port, b"CONNECT nope.test:443 HTTP/1.1\r\n\r\n").startswith(
            b"HTTP/1.1 403")


def test_the_proxy_listens_on_a_unix_socket(tmp_path: Path) -> None:
    path = tmp_path / "proxy.sock"
    with DomainProxy(NetworkPolicy(allowed_domains=("example.com",)), str(path)), \
            socket.socket(socket.AF_UNIX) as s:
        s.connect(str(path))
        s.sendall(b"CONNECT blocked.test:443 HTTP/1.1\r\n\r\n")
        assert s.recv(1024).startswith(b"HTTP/1.1 403")


def test_the_connection_goes_to_the_checked_address_not_a_second_lookup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DNS rebinding between check and connect: a resolver may answer a
    public address for the check and loopback for a second lookup. The
    proxy must connect to the address it checked. (The connection itself is
    intercepted: no packet leaves this machine.)"""
    real = socket.getaddrinfo
    answers = iter(["203.0.113.7", "127.0.0.1", "127.0.0.1"])

    def rebinding(host: str, *args: object, **kwargs: object) -> object:
        if host == "rebind.example.com":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), 443))]
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    dialed: list[str] = []

    async def no_connect(host: str, port: int, **kwargs: object) -> object:
        dialed.append(host)
        raise OSError("intercepted by the test")

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    monkeypatch.setattr(asyncio, "open_connection", no_connect)
    with _proxy(("rebind.example.com",)) as proxy:
        assert proxy.port is not None
        reply = _request(proxy.port, b"CONNECT rebind.example.com:443 HTTP/1.1\r\n\r\n")
    assert dialed == ["203.0.113.7"]
    assert reply.startswith(b"HTTP/1.1 502")


@pytest.mark.parametrize("address", ["10.1.2.3", "192.168.0.10", "172.16.5.5", "169.254.169.254"])
def test_private_and_metadata_addresses_are_refused_even_when_allowed_by_name(
    address: str,
) -> None:
    with _proxy((address,)) as proxy:
        assert proxy.port is not None
        reply = _request(proxy.port, f"CONNECT {address}:443 HTTP/1.1\r\n\r\n".encode())
    assert reply.startswith(b"HTTP/1.1 403")
    assert b"non-public address" in reply


def test_private_addresses_can_be_allowed_but_never_loopback_or_metadata() -> None:
    """Only the decision is exercised: nothing is ever dialed here (this
    machine must not send traffic to private ranges)."""
    net = NetworkPolicy(allowed_domains=("10.1.2.3", "127.0.0.1", "169.254.169.254"),
                        allow_private_addresses=True)
    proxy = DomainProxy(net, None)
    outcomes = {t: asyncio.run(proxy._resolve(t, 443))
                for t in ("10.1.2.3", "127.0.0.1", "169.254.169.254")}
    assert outcomes["10.1.2.3"] == ("10.1.2.3", None)
    assert outcomes["127.0.0.1"][1] is not None
    assert outcomes["169.254.169.254"][1] is not None
    strict = DomainProxy(NetworkPolicy(allowed_domains=("10.1.2.3",)), None)
    assert "non-public" in (asyncio.run(strict._resolve("10.1.2.3", 443))[1] or "")


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "local"), ("::1", "local"), ("169.254.169.254", "local"),
        ("0.0.0.0", "local"), ("0.1.2.3", "local"), ("240.0.0.1", "local"),
        ("198.18.0.1", "local"), ("224.0.0.1", "local"),
        ("64:ff9b::7f00:1", "local"),          # NAT64 of 127.0.0.1
        ("2002:7f00:1::", "local"),            # 6to4 of 127.0.0.1
        ("::ffff:127.0.0.1", "local"),         # IPv4-mapped
        ("10.1.2.3", "private"), ("192.168.1.1", "private"), ("100.64.0.1", "private"),
        ("fd00::1", "private"), ("64:ff9b::a01:203", "private"),  # NAT64 of 10.1.2.3
        ("2002:c0a8:101::", "private"),        # 6to4 of 192.168.1.1
        ("8.8.8.8", "public"), ("2606:4700::1111", "public"),
    ],
)
def test_addresses_are_classified_by_what_they_reach(address: str, kind: str) -> None:
    """An IPv6 address that carries an IPv4 one (NAT64, 6to4, Teredo,
    mapped) is judged by the IPv4 address: `64:ff9b::7f00:1` is loopback."""
    assert classify(ipaddress.ip_address(address), set()) == kind


@pytest.mark.parametrize("target", ["pypi.org:\u00b2", "pypi.org:99999", "pypi.org:-1",
                                    "pypi.org:0443x", "[::1]:\u0663"])
def test_a_port_that_is_not_ascii_digits_in_range_is_no_port(target: str) -> None:
    """`str.isdigit` accepts `²` and `٣`, which `int` then refuses: the
    request line `CONNECT pypi.org:² HTTP/1.1` raised out of the handler."""
    assert _split_host_port(target, 443)[1] == 443


@pytest.mark.parametrize("host", ["f\u00adiles.example.org", "fi\u200bles.example.org",
                                  "files.example.org\u3002", "ex ample.org", "a" * 300 + ".org"])
def test_a_host_that_is_not_plain_ascii_is_refused_before_any_decision(host: str) -> None:
    """Attack (from a review): `f\\xadiles.pythonhosted.org` is not the
    denied `files.pythonhosted.org` to a string match, but getaddrinfo's
    IDNA drops the soft hyphen and connects there."""
    network = NetworkPolicy(allowed_domains=("*.example.org",),
                            denied_domains=("files.example.org",))
    with DomainProxy(network, None) as proxy:
        assert proxy.port is not None
        reply = _request(proxy.port, f"CONNECT {host}:443 HTTP/1.1\r\n\r\n".encode())
    assert reply.startswith(b"HTTP/1.1 400"), reply[:80]


def test_the_proxy_keeps_a_bounded_number_of_events() -> None:
    with _proxy(("example.org",)) as proxy:
        assert proxy.port is not None
        for i in range(1100):
            proxy._record(f"h{i}.invalid", 443, False, "test")
    assert len(proxy.events) == 1000 and proxy.events[-1].host == "h1099.invalid"
