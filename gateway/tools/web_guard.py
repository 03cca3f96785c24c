"""WebFetch's address checks: which URLs it takes, and which addresses it
connects to — public ones only.

The attack (server-side request forgery): a page, a README or a prompt
asks the model to "fetch http://169.254.169.254/latest/meta-data/iam/…",
and the gateway — running on the host, outside the sandbox, with the
host's network — hands the cloud's instance credentials to the model; or
``http://localhost:8080/admin`` reaches a service that trusts local
callers. So every address a name resolves to is judged *after*
resolution (a name of the attacker's may resolve to 127.0.0.1), for every
hop; the connection then goes to the very address judged (a second lookup
at connect time could answer differently: DNS rebinding), with the name
kept for TLS and the ``Host`` header.

Numbers written otherwise than ``a.b.c.d`` (``2130706433``, ``0177.0.0.1``,
``0x7f.1``, ``127.1``) are what the C resolver reads as IPv4 addresses:
refused up front rather than judged after a lookup that might not happen
the same way everywhere."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from urllib.parse import urlsplit

from regexes import regex
from values import valueclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
#: a name and port in, the addresses it resolves to out
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

#: what no WebFetch reaches, first match naming it (the rest of what
#: ``ipaddress`` does not call global is refused as "not public")
BLOCKED: tuple[tuple[str, str], ...] = (
    ("0.0.0.0/8", "the unspecified address (this host)"),
    ("10.0.0.0/8", "a private address"),
    ("100.64.0.0/10", "a carrier-grade NAT address"),
    ("127.0.0.0/8", "a loopback address"),
    ("169.254.0.0/16", "a link-local address (where cloud metadata services answer)"),
    ("172.16.0.0/12", "a private address"),
    ("192.0.0.0/24", "an IETF protocol address"),
    ("192.0.2.0/24", "a documentation address"),
    ("192.88.99.0/24", "a 6to4 relay address"),
    ("192.168.0.0/16", "a private address"),
    ("198.18.0.0/15", "a benchmarking address"),
    ("198.51.100.0/24", "a documentation address"),
    ("203.0.113.0/24", "a documentation address"),
    ("224.0.0.0/4", "a multicast address"),
    ("240.0.0.0/4", "a reserved address"),
    ("::/128", "the unspecified address (this host)"),
    ("::1/128", "a loopback address"),
    ("100::/64", "a discard address"),
    ("2001::/32", "a Teredo tunnel address"),
    ("2001:db8::/32", "a documentation address"),
    ("64:ff9b:1::/48", "a local NAT64 address"),
    ("fc00::/7", "a unique-local (private) address"),
    ("fe80::/10", "a link-local address"),
    ("fec0::/10", "a site-local address"),
    ("ff00::/8", "a multicast address"),
)
_BLOCKED = tuple((ipaddress.ip_network(n), why) for n, why in BLOCKED)

#: IPv6 forms that carry an IPv4 address, judged by it: the kernel sends
#: a mapped address to IPv4 (``[::ffff:127.0.0.1]`` is loopback), and a
#: NAT64 or 6to4 gateway forwards to the one inside (``ipaddress`` calls
#: 64:ff9b::7f00:1 global)
_EMBEDDING: tuple[tuple[str, str, Callable[[ipaddress.IPv6Address], int]], ...] = (
    ("::ffff:0:0/96", "IPv4-mapped", lambda ip: int(ip) & 0xFFFFFFFF),
    ("64:ff9b::/96", "NAT64", lambda ip: int(ip) & 0xFFFFFFFF),
    ("2002::/16", "6to4", lambda ip: (int(ip) >> 80) & 0xFFFFFFFF),
    ("::/96", "IPv4-compatible", lambda ip: int(ip) & 0xFFFFFFFF),
)
_EMBEDS = tuple((ipaddress.IPv6Network(n), what, get) for n, what, get in _EMBEDDING)


def classify(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public address (``None``: it is)."""
    if isinstance(ip, ipaddress.IPv6Address):
        for net, why in _BLOCKED:
            if net.version == 6 and ip in net and net.prefixlen == 128:
                return why  # :: and ::1, before the IPv4-compatible form holding them
        for net, what, get in _EMBEDS:
            if ip in net:
                inner = ipaddress.IPv4Address(get(ip))
                held = classify(inner)
                return f"the {what} form of {inner}, {held}" if held else None
    for net, why in _BLOCKED:
        if net.version == ip.version and ip in net:
            return why
    return None if ip.is_global else "not a public address"


@valueclass
class AddressPolicy:
    """Which non-public addresses may be reached anyway: none, except in
    tests (``WebFetchTool(allow_private_addresses=…)``, constructor only)."""

    allow_all: bool = False
    allowed: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()

    @classmethod
    def of(cls, allow: bool | Iterable[str]) -> AddressPolicy:
        if isinstance(allow, bool):
            return cls(allow_all=allow)
        return cls(allowed=tuple(ipaddress.ip_network(n) for n in allow))

    @property
    def opened(self) -> bool:
        return self.allow_all or bool(self.allowed)

    def refusal(self, ip: IPAddress) -> str | None:
        """Why ``ip`` may not be reached (``None``: it may)."""
        if self.allow_all or any(ip.version == n.version and ip in n for n in self.allowed):
            return None
        return classify(ip)


@valueclass
class Target:
    """A URL as WebFetch fetches it: scheme, host (lowercase ASCII, no
    trailing dot; an IPv6 address without brackets), port, and the path
    with its query (the fragment is the reader's, never sent)."""

    scheme: str
    host: str
    port: int
    path: str
    literal: IPAddress | None = None

    @property
    def authority(self) -> str:
        """``host[:port]`` as the ``Host`` header carries it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = {"http": 80, "https": 443}[self.scheme]
        return host if self.port == default else f"{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.authority}{self.path}"

    def same_site(self, other: Target) -> bool:
        """The same host and port: a redirect there is the same permission."""
        return (self.host, self.port) == (other.host, other.port)


MAX_URL_CHARS = 2000
_HOST = regex(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")
#: a label the C resolver reads as a number (decimal, octal, hex): a host
#: ending in one is an IPv4 address, however written (as in WHATWG's URL)
_NUMERIC = regex(r"(?:0x[0-9a-f]*|[0-9]+)")
_UNSAFE = regex(r"[\s\\\x00-\x1f\x7f]")


def parse_url(raw: str, *, upgrade: bool = True) -> Target | str:
    """``raw`` as a :class:`Target`, or why it is refused: not http(s), a
    user name or password in it, no host, a number that is not a plain
    IPv4 address, a host that is not a name. ``http`` becomes ``https``
    unless ``upgrade`` is off (a test's local server)."""
    url = raw.strip()
    if len(url) > MAX_URL_CHARS:
        return f"the URL is longer than {MAX_URL_CHARS} characters"
    if _UNSAFE.search(url):
        return "the URL holds spaces, control characters or backslashes"
    if not url.isascii():
        try:  # a lone surrogate ("\ud800" in the JSON input) raised out of the tool in httpx
            url.encode("utf-8")
        except UnicodeEncodeError:
            return "the URL holds a lone surrogate, which is not text"
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed '[' of an IPv6 host
        return "the URL cannot be parsed"
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        return f"only http and https URLs are fetched, not {scheme or 'a URL without a scheme'}"
    if "@" in parts.netloc:
        return ("URLs with a user name or password are refused (a credential in a URL ends up "
                "in logs and on the server)")
    try:
        port = parts.port
    except ValueError:
        return "the URL's port is not a number from 1 to 65535"
    host = (parts.hostname or "").rstrip(".")
    if not host:
        return "the URL has no host"
    literal = _literal(host, bracketed="[" in parts.netloc)
    if isinstance(literal, str):
        return literal
    if literal is None:
        named = _name(host)
        if named is None:
            return f"{host!r} is not a valid host name"
        # the name as the resolver gets it, judged again: IDNA folds
        # U+3002 and full-width forms into ASCII, so ``0x7f。1`` passed as
        # a name and went to the resolver as 0x7f.1, and ``127。0。0。1``
        # was allowed without its address being judged until connect time
        literal = _literal(named, bracketed=False)
        if isinstance(literal, str):
            return literal
        host = named
    if upgrade and scheme == "http":
        scheme = "https"
    if port == 0:
        return "the URL's port is not a number from 1 to 65535"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    default = 443 if scheme == "https" else 80
    return Target(scheme, host if literal is None else str(literal), port or default, path,
                  literal)


def _literal(host: str, *, bracketed: bool) -> IPAddress | str | None:
    """The host as an IP address; why it is refused (a zone id, a number
    not written ``a.b.c.d``); ``None`` when it is a name."""
    if "%" in host:
        return "the URL's host holds '%' (an encoded name or a zone id)"
    if bracketed:
        try:
            return ipaddress.IPv6Address(host)
        except ValueError:
            return f"[{host}] is not an IPv6 address"
    if not _NUMERIC.fullmatch(host.rsplit(".", 1)[-1]):
        return None
    try:
        ip = ipaddress.IPv4Address(host)
    except ValueError:
        ip = None
    if ip is None or str(ip) != host:
        return (f"{host} is a number the resolver reads as an IPv4 address; write the "
                "address as four decimal parts (a.b.c.d)")
    return ip


def _name(host: str) -> str | None:
    """A host name in lowercase ASCII (internationalized names as punycode)."""
    try:
        ascii_host = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return None
    if len(ascii_host) > 253 or not _HOST.fullmatch(ascii_host):
        return None
    if any(len(label) > 63 for label in ascii_host.split(".")):
        return None
    return ascii_host


async def system_resolver(host: str, port: int) -> Sequence[str]:
    """Every address the system resolver gives ``host`` (TCP)."""
    import asyncio  # noqa: PLC0415 - only a fetch needs the loop's resolver

    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


async def addresses(target: Target, policy: AddressPolicy,
                    resolver: Resolver) -> tuple[str, ...] | str:
    """The addresses to connect to for ``target``, every one judged; or why
    none may be used (one bad address refuses the name: which of them a
    connection would take is not ours to choose)."""
    if target.literal is not None:
        found: Sequence[str] = (str(target.literal),)
    else:
        try:
            found = await resolver(target.host, target.port)
        except OSError as exc:
            return f"{target.host} could not be resolved ({exc.strerror or exc})"
    judged: list[str] = []
    for text in dict.fromkeys(found):
        try:
            ip = ipaddress.ip_address(text.split("%", 1)[0])
        except ValueError:
            return f"{target.host} resolved to {text!r}, which is not an address"
        why = policy.refusal(ip)
        if why is not None:
            named = "" if target.literal is not None else f"{target.host} resolves to "
            return (f"{named}{ip} is {why}; WebFetch reaches public addresses only, and no "
                    "rule or setting changes that")
        judged.append(str(ip))
    if not judged:
        return f"{target.host} has no address"
    return tuple(judged)
