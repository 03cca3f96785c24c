"""WebFetch against a real HTTP server on 127.0.0.1 (and a real TLS one):
content, redirects, caps, the cache, permissions through the pipeline, and
the address checks that keep it off private networks."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from web_server import LocalWeb, first_bytes, gzipped, serve

from gateway.context import ToolContext
from gateway.decisions import Decision
from gateway.messages import ToolResultMessage, ToolUse
from gateway.permissions import CliPermissions, load_permissions
from gateway.session import Session
from gateway.tools.registry import all_base_tools
from gateway.tools.web_content import MAX_TITLE, Inflater
from gateway.tools.web_fetch import WEB_FETCH, FetchLimits, WebFetchInput, WebFetchTool
from gateway.tools.web_guard import classify, parse_url

Ctx = Callable[[], ToolContext]
LOCAL = ("127.0.0.1/32",)


@pytest.fixture
def web() -> Iterator[LocalWeb]:
    with serve() as server:
        yield server


def local_tool(**kw: Any) -> WebFetchTool:
    """The tool as a test server needs it: 127.0.0.1 reachable, http kept."""
    return WebFetchTool(allow_private_addresses=LOCAL, upgrade_http=False, **kw)


def fetch(tool: WebFetchTool, ctx: ToolContext, url: str, prompt: str = "") -> ToolResultMessage:
    """Validation, the tool's own permission opinion, then the call."""
    data = WebFetchInput(url=url, prompt=prompt)
    checked = asyncio.run(tool.validate_input(data, ctx))
    if not checked.ok:
        return ToolResultMessage(ctx.tool_use_id, (), is_error=True)
    verdict = asyncio.run(tool.check_permissions(data, ctx))
    assert verdict.decision is Decision.ALLOW, verdict
    return tool.map_result(asyncio.run(tool.call(data, ctx, lambda _: None)), ctx.tool_use_id)


def resolver(table: dict[str, Sequence[Sequence[str]]]) -> Any:
    """A resolver answering from ``table``: each name's answers in turn
    (the last one repeated) — DNS as an attacker's server would answer."""
    calls: dict[str, int] = {}

    async def resolve(host: str, port: int) -> Sequence[str]:
        n = calls.get(host, 0)
        calls[host] = n + 1
        answers = table.get(host)
        if answers is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answers[min(n, len(answers) - 1)]

    return resolve


# -- content -------------------------------------------------------------------

def test_html_comes_back_as_markdown_with_the_url_status_and_prompt(web: LocalWeb,
                                                                     tool_context: Ctx) -> None:
    result = fetch(local_tool(), tool_context(), web.url("/page.html"), "what is the heading?")
    text = result.text
    assert not result.is_error
    assert f"URL: {web.url('/page.html')}" in text and "Status: 200 OK" in text
    assert "Content-Type: text/html" in text and "Title: The Page" in text
    assert "What you asked for: what is the heading?" in text
    assert "# Heading" in text and "**bold**" in text
    assert "[a link](https://example.com/x)" in text and "- one" in text
    assert "alert" not in text and "color: red" not in text and "base64" not in text


@pytest.mark.parametrize(("path", "expected", "kind"), [
    ("/plain.txt", "hello\nworld", "text/plain"),
    ("/data.json", '{"a": [1, 2]}', "application/json"),
    ("/latin1.txt", "caf\u00e9", "text/plain"),
])
def test_text_and_json_come_back_as_they_are(web: LocalWeb, tool_context: Ctx, path: str,
                                              expected: str, kind: str) -> None:
    result = fetch(local_tool(), tool_context(), web.url(path))
    assert not result.is_error
    assert f"Content-Type: {kind}" in result.text
    assert result.text.split("---\n", 1)[1].rstrip("\n") == expected


@pytest.mark.parametrize(("path", "says"), [
    ("/image.png", "is image/png"),
    ("/unlabelled", "sent no content type and its body is binary"),
])
def test_binary_content_is_refused_with_its_type(web: LocalWeb, tool_context: Ctx, path: str,
                                                 says: str) -> None:
    result = fetch(local_tool(), tool_context(), web.url(path))
    assert result.is_error and says in result.text
    assert "PNG" not in result.text


def test_an_error_status_is_shown_with_its_page_and_marked_an_error(web: LocalWeb,
                                                                    tool_context: Ctx) -> None:
    result = fetch(local_tool(), tool_context(), web.url("/missing"))
    assert result.is_error
    assert "Status: 404 Not Found" in result.text and "# Not here" in result.text


# -- redirects -------------------------------------------------------------------

def test_a_redirect_on_the_same_host_is_followed(web: LocalWeb, tool_context: Ctx) -> None:
    result = fetch(local_tool(), tool_context(), web.url("/same"))
    assert not result.is_error
    assert f"URL: {web.url('/plain.txt')}" in result.text and "hello" in result.text
    assert web.record.hits["/plain.txt"] == 1


def test_a_redirect_to_another_host_is_reported_not_followed(web: LocalWeb,
                                                              tool_context: Ctx) -> None:
    result = fetch(local_tool(), tool_context(), web.url("/other"), "the news")
    assert not result.is_error
    assert "REDIRECT" in result.text and "https://elsewhere.example/page?q=1" in result.text
    assert "call WebFetch again" in result.text and "What you asked for: the news" in result.text
    assert "refused too" not in result.text


@pytest.mark.parametrize(("path", "why"), [
    ("/metadata", "169.254.169.254 is a link-local address"),
    ("/loopback", "127.0.0.2 is a loopback address"),
])
def test_a_redirect_to_a_private_address_is_not_followed_and_says_it_would_be_refused(
        web: LocalWeb, tool_context: Ctx, path: str, why: str) -> None:
    result = fetch(local_tool(), tool_context(), web.url(path))
    assert "It was not followed" in result.text and why in result.text


def test_a_redirect_to_a_url_with_a_password_is_refused(web: LocalWeb, tool_context: Ctx) -> None:
    result = fetch(local_tool(), tool_context(), web.url("/userinfo"))
    assert result.is_error and "user name or password" in result.text
    assert "pw" not in result.text.replace("password", "")
    assert web.record.hits["/plain.txt"] == 0


def test_a_redirect_loop_stops_at_the_cap(web: LocalWeb, tool_context: Ctx) -> None:
    result = fetch(local_tool(limits=FetchLimits(max_redirects=3)), tool_context(),
                   web.url("/loop"))
    assert result.is_error and "more than 3 redirects" in result.text
    assert web.record.hits["/loop"] == 4


def test_each_hop_is_resolved_and_judged_anew(web: LocalWeb, tool_context: Ctx) -> None:
    """DNS rebinding across a redirect: the name answered 127.0.0.1 (let in
    here), then the metadata address for the same-host hop."""
    tool = local_tool(resolver=resolver({"site.test": [["127.0.0.1"], ["169.254.169.254"]]}))
    result = fetch(tool, tool_context(), web.url("/same", host="site.test"))
    assert result.is_error and "site.test resolves to 169.254.169.254" in result.text
    assert web.record.hits["/same"] == 1 and web.record.hits["/plain.txt"] == 0


# -- where it connects ----------------------------------------------------------------

def test_it_connects_to_the_address_it_judged_and_sends_the_name_as_host(
        web: LocalWeb, tool_context: Ctx) -> None:
    # the system resolver knows no site.test: the page can only come from
    # the address the check saw
    tool = local_tool(resolver=resolver({"site.test": [["127.0.0.1"]]}))
    result = fetch(tool, tool_context(), web.url("/plain.txt", host="site.test"))
    assert not result.is_error, result.text
    assert web.record.hosts == [f"site.test:{web.port}"]


@pytest.mark.parametrize("answers", [["127.0.0.1", "10.0.0.7"], ["169.254.169.254"],
                                     ["::ffff:127.0.0.2"], ["fd00::1", "127.0.0.1"]])
def test_a_name_is_refused_when_any_of_its_addresses_is_private(
        web: LocalWeb, tool_context: Ctx, answers: list[str]) -> None:
    tool = local_tool(resolver=resolver({"mixed.test": [answers]}))
    result = fetch(tool, tool_context(), web.url("/plain.txt", host="mixed.test"))
    assert result.is_error and "WebFetch reaches public addresses only" in result.text
    assert sum(web.record.hits.values()) == 0


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    where = tmp_path_factory.mktemp("tls")
    cert, key = str(where / "cert.pem"), str(where / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=site.test", "-addext", "subjectAltName=DNS:site.test",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    return cert, key


def test_tls_gets_the_name_for_sni_and_the_certificate_check(
        certificate: tuple[str, str], tool_context: Ctx) -> None:
    names = resolver({"site.test": [["127.0.0.1"]], "other.test": [["127.0.0.1"]]})
    tool = WebFetchTool(allow_private_addresses=LOCAL, resolver=names, ca_file=certificate[0])
    with serve(certificate) as tls:
        good = fetch(tool, tool_context(), tls.url("/plain.txt", host="site.test"))
        assert not good.is_error, good.text
        assert tls.record.sni == ["site.test"] and tls.record.hosts == [f"site.test:{tls.port}"]
        # the same address under another name: its certificate does not name it
        wrong = fetch(tool, tool_context(), tls.url("/plain.txt", host="other.test"))
        assert wrong.is_error and "certificate" in wrong.text.lower()
        assert tls.record.hits["/plain.txt"] == 1


def test_http_is_upgraded_to_https(tool_context: Ctx) -> None:
    tool = WebFetchTool(allow_private_addresses=LOCAL)
    with first_bytes() as (port, seen):
        result = fetch(tool, tool_context(), f"http://127.0.0.1:{port}/a?b=1")
    assert result.is_error and f"https://127.0.0.1:{port}/a?b=1" in result.text
    assert seen and seen[0][:1] == b"\x16"  # a TLS handshake record


def test_keeping_http_needs_the_private_address_switch() -> None:
    with pytest.raises(ValueError, match="local test server"):
        WebFetchTool(upgrade_http=False)


# -- caps --------------------------------------------------------------------------

def test_the_body_is_read_up_to_the_cap_and_the_result_says_so(web: LocalWeb,
                                                               tool_context: Ctx) -> None:
    result = fetch(local_tool(limits=FetchLimits(max_bytes=100_000)), tool_context(),
                   web.url("/big"))
    assert not result.is_error
    assert "[the body was cut at 100,000 bytes]" in result.text
    assert len(result.text) < 101_000


def test_the_text_is_cut_at_its_cap_with_a_marker(web: LocalWeb, tool_context: Ctx) -> None:
    result = fetch(local_tool(limits=FetchLimits(max_chars=1000)), tool_context(),
                   web.url("/big"))
    assert "[the content was cut at 1,000 characters]" in result.text
    assert len(result.text.split("---\n", 1)[1]) < 1100


def test_a_server_that_trickles_is_stopped_at_the_total_time(web: LocalWeb,
                                                             tool_context: Ctx) -> None:
    started = time.monotonic()
    result = fetch(local_tool(limits=FetchLimits(total_s=0.5)), tool_context(),
                   web.url("/slow"))
    assert result.is_error and "no complete answer within 0.5 s" in result.text
    assert time.monotonic() - started < 3


# -- the cache ---------------------------------------------------------------------

def test_a_url_fetched_again_in_the_session_comes_from_the_cache(web: LocalWeb,
                                                                 tool_context: Ctx) -> None:
    tool = local_tool()
    first = fetch(tool, tool_context(), web.url("/count"))
    again = fetch(tool, tool_context(), web.url("/count"), "asked again")
    assert "visit 1" in first.text and "cache" not in first.text
    assert "visit 1" in again.text and "from this session's cache" in again.text
    assert "What you asked for: asked again" in again.text
    assert web.record.hits["/count"] == 1


def test_the_cache_expires(web: LocalWeb, tool_context: Ctx) -> None:
    tool = local_tool(limits=FetchLimits(cache_s=0.0))
    fetch(tool, tool_context(), web.url("/count"))
    assert "visit 2" in fetch(tool, tool_context(), web.url("/count")).text


# -- through the pipeline ----------------------------------------------------------------

def _session(workspace: Path, tmp_path: Path, tool: WebFetchTool, *allow: str) -> Session:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    permissions = load_permissions(str(workspace), str(home),
                                   CliPermissions(allowed_tools=allow), managed_dirs=[])
    # the test's WebFetch (reaching the local server) in place of the built-in
    base = [t for t in all_base_tools() if t.name != "WebFetch"]
    return Session.open(str(workspace), base_tools=[*base, tool], permissions=permissions,
                        home=str(home), results_dir=str(tmp_path / "results"))


def _run(session: Session, url: str) -> ToolResultMessage:
    return asyncio.run(session.run(ToolUse("toolu_w", "WebFetch", {"url": url, "prompt": "p"})))


def test_a_domain_allow_rule_lets_it_run_headless(web: LocalWeb, workspace: Path,
                                                  tmp_path: Path) -> None:
    session = _session(workspace, tmp_path, local_tool(), "WebFetch(domain:127.0.0.1)")
    result = _run(session, web.url("/plain.txt"))
    assert not result.is_error, result.text
    assert "hello" in result.text


def test_without_a_rule_it_is_denied_headless_and_never_sent(web: LocalWeb, workspace: Path,
                                                             tmp_path: Path) -> None:
    session = _session(workspace, tmp_path, local_tool(), "WebFetch(domain:example.com)")
    result = _run(session, web.url("/plain.txt"))
    assert result.is_error and "Permission to use WebFetch was denied" in result.text
    assert "WebFetch(domain:127.0.0.1)" in result.text  # the rule that would allow it
    assert sum(web.record.hits.values()) == 0


def test_with_the_switch_off_the_first_request_to_loopback_is_refused(
        web: LocalWeb, workspace: Path, tmp_path: Path) -> None:
    session = _session(workspace, tmp_path, WebFetchTool(), "WebFetch(domain:127.0.0.1)",
                       "WebFetch(domain:localhost)")
    by_address = _run(session, web.url("/plain.txt"))
    assert by_address.is_error and "127.0.0.1 is a loopback address" in by_address.text
    by_name = _run(session, web.url("/plain.txt", host="localhost"))  # resolved, then judged
    assert by_name.is_error and "localhost resolves to" in by_name.text
    assert sum(web.record.hits.values()) == 0


def test_the_registered_instance_has_the_switch_off(tool_context: Ctx) -> None:
    data = WebFetchInput(url="http://127.0.0.1/")
    verdict = asyncio.run(WEB_FETCH.check_permissions(data, tool_context()))
    assert verdict.decision is Decision.DENY


def test_it_declares_itself_a_concurrency_safe_writer_matched_by_domain(
        tool_context: Ctx) -> None:
    ctx, data = tool_context(), WebFetchInput(url="http://Docs.Example.COM./a")
    assert not WEB_FETCH.is_read_only(data, ctx) and WEB_FETCH.is_concurrency_safe(data, ctx)
    assert WEB_FETCH.interrupt_behavior() == "cancel"
    subject = WEB_FETCH.permission_matcher(data, ctx)
    assert (subject.kind, subject.values) == ("domain", ("docs.example.com",))


# -- which URLs and addresses -------------------------------------------------------------

@pytest.mark.parametrize(("url", "says"), [
    ("http://user:pw@example.com/", "user name or password"),
    ("http://user@example.com/", "user name or password"),
    ("ftp://example.com/f", "only http and https"),
    ("file:///etc/passwd", "only http and https"),
    ("javascript:alert(1)", "only http and https"),
    ("example.com/page", "only http and https"),
    ("https:///path", "no host"),
    ("https://exa mple.com/", "spaces"),
    ("https://example.com\\@evil.com/", "backslashes"),
    ("https://example.com:99999/", "port"),
    ("https://[::1/", "cannot be parsed"),
    ("https://ex%61mple.com/", "'%'"),
    ("https://a..b/", "not a valid host name"),
    ("http://2130706433/", "four decimal parts"),
    ("http://0177.0.0.1/", "four decimal parts"),
    ("http://0x7f.0.0.1/", "four decimal parts"),
    ("http://127.1/", "four decimal parts"),
    ("http://0/", "four decimal parts"),
    ("http://example.0x10/", "four decimal parts"),
    # IDNA folds U+3002 and full-width digits: the resolver would get 0x7f.1
    ("http://0x7f\u30021/", "four decimal parts"),
    ("http://\uff10\uff58\uff17\uff46.1/", "four decimal parts"),
    ("https://example.com/\ud800", "lone surrogate"),  # raised out of the tool in httpx
])
def test_urls_refused_up_front(tool_context: Ctx, url: str, says: str) -> None:
    checked = asyncio.run(WEB_FETCH.validate_input(WebFetchInput(url=url), tool_context()))
    assert not checked.ok and says in checked.message
    assert "pw" not in checked.message.replace("password", "")  # a credential never echoed


@pytest.mark.parametrize("spelling", ["2130706433", "0177.0.0.1", "0x7f.0.0.1", "127.1"])
def test_the_refused_number_spellings_are_loopback_to_the_resolver(spelling: str) -> None:
    """Why they are refused: the C resolver reads each as 127.0.0.1."""
    assert socket.getaddrinfo(spelling, 80, type=socket.SOCK_STREAM)[0][4][0] == "127.0.0.1"


@pytest.mark.parametrize(("url", "why"), [
    ("http://127.0.0.1/", "a loopback address"),
    ("http://127.255.0.9/", "a loopback address"),
    ("http://0.0.0.0/", "the unspecified address"),
    ("http://[::]/", "the unspecified address"),
    ("http://[::1]/", "a loopback address"),
    ("http://169.254.169.254/latest/meta-data/", "a link-local address"),
    ("http://[fe80::1]/", "a link-local address"),
    ("http://10.1.2.3/", "a private address"),
    ("http://172.16.0.1/", "a private address"),
    ("http://172.31.255.255/", "a private address"),
    ("http://192.168.1.1/", "a private address"),
    ("http://[fc00::1]/", "unique-local"),
    ("http://[fd12:3456::1]/", "unique-local"),
    ("http://100.64.0.1/", "carrier-grade NAT"),
    ("http://224.0.0.251/", "a multicast address"),
    ("http://[ff02::1]/", "a multicast address"),
    ("http://240.0.0.1/", "a reserved address"),
    ("http://255.255.255.255/", "a reserved address"),
    ("http://192.0.2.10/", "a documentation address"),
    ("http://[2001:db8::1]/", "a documentation address"),
    ("http://[::ffff:127.0.0.1]/", "IPv4-mapped form of 127.0.0.1, a loopback"),
    ("http://[::ffff:169.254.169.254]/", "IPv4-mapped form of 169.254.169.254"),
    ("http://[::127.0.0.1]/", "IPv4-compatible form of 127.0.0.1"),
    ("http://[64:ff9b::a00:1]/", "NAT64 form of 10.0.0.1"),
    ("http://[2002:7f00:1::1]/", "6to4 form of 127.0.0.1"),
    ("http://[2001::1]/", "Teredo"),
    ("http://127\u30020\u30020\u30021/", "a loopback address"),  # ideographic full stops
    ("http://169\uff0e254\uff0e169\uff0e254/", "a link-local address"),  # full-width
])
def test_address_literals_outside_the_public_internet_are_denied(tool_context: Ctx, url: str,
                                                                 why: str) -> None:
    ctx, data = tool_context(), WebFetchInput(url=url)
    assert asyncio.run(WEB_FETCH.validate_input(data, ctx)).ok
    verdict = asyncio.run(WEB_FETCH.check_permissions(data, ctx))
    assert verdict.decision is Decision.DENY and why in verdict.reason, verdict.reason


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700::1111",
                                     "::ffff:8.8.8.8", "2002:808:808::1"])
def test_public_addresses_pass(address: str) -> None:
    assert classify(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(("url", "fetched"), [
    ("http://example.com", "https://example.com/"),
    ("http://example.com:8080/a?b=c#frag", "https://example.com:8080/a?b=c"),
    ("HTTPS://Example.COM./", "https://example.com/"),
    ("https://b\u00fccher.example/", "https://xn--bcher-kva.example/"),
    ("https://[2606:4700::1111]/", "https://[2606:4700::1111]/"),
])
def test_urls_are_normalized_before_rules_see_them(url: str, fetched: str) -> None:
    target = parse_url(url)
    assert not isinstance(target, str) and target.url == fetched


# -- hostile servers (each found by a review; the reproducer is in the code) ---------------

@pytest.mark.parametrize(("path", "text"), [("/gzip", "squeezed text"),
                                            ("/deflate-raw", "raw deflate")])
def test_a_compressed_body_is_inflated(web: LocalWeb, tool_context: Ctx, path: str,
                                       text: str) -> None:
    result = fetch(local_tool(), tool_context(), web.url(path))
    assert not result.is_error, result.text
    assert result.text.split("---\n", 1)[1].strip() == text


@pytest.mark.parametrize(("path", "says"), [
    ("/gzip-twice", "is sent in gzip, gzip, which WebFetch does not decode"),
    ("/brotli", "is sent in br, which WebFetch does not decode"),
    ("/corrupt-gzip", "its gzip body is corrupt"),
])
def test_a_body_in_stacked_unknown_or_broken_encodings_is_refused(
        web: LocalWeb, tool_context: Ctx, path: str, says: str) -> None:
    result = fetch(local_tool(), tool_context(), web.url(path))
    assert result.is_error and says in result.text


def test_a_gzip_bomb_is_cut_at_the_cap(web: LocalWeb, tool_context: Ctx) -> None:
    result = fetch(local_tool(limits=FetchLimits(max_bytes=100_000)), tool_context(),
                   web.url("/gzip-zeros"))
    assert "[the body was cut at 100,000 bytes]" in result.text


def test_inflating_never_goes_past_the_room_left() -> None:
    """One chunk of 50 KB inflating to 50 MB yields what the cap leaves,
    not the 50 MB (httpx inflated each chunk whole, and nested codings)."""
    inflater = Inflater.of(["gzip"])
    assert isinstance(inflater, Inflater)
    assert len(inflater.feed(gzipped(b"0" * 50_000_000), 1000)) == 1001


@pytest.mark.parametrize("path", ["/charset-punycode", "/charset-idna", "/charset-rot13"])
def test_a_charset_no_page_is_in_is_read_as_utf8_in_time(web: LocalWeb, tool_context: Ctx,
                                                         path: str) -> None:
    """punycode's decoder is quadratic (and ran on the event loop), idna's
    refuses to replace: a 3 s deadline returned after 17 s, or an exception."""
    started = time.monotonic()
    result = fetch(local_tool(limits=FetchLimits(total_s=3.0)), tool_context(), web.url(path))
    assert not result.is_error, result.text
    assert time.monotonic() - started < 3
    assert "plain words" in result.text or "a" * 1000 in result.text


def _children() -> list[str]:
    """The command lines of this process's live children."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == os.getpid() and fields[0] != "Z":
                found.append((stat.parent / "cmdline").read_bytes().decode(errors="replace"))
        except (OSError, IndexError, ValueError):
            continue
    return found


def test_a_page_of_blanks_is_converted_in_time(web: LocalWeb, tool_context: Ctx) -> None:
    """A quadratic regex on 200,000 blanks held the gateway for minutes."""
    started = time.monotonic()
    result = fetch(local_tool(), tool_context(), web.url("/pre-blanks"))
    assert not result.is_error, result.text
    assert result.text.rstrip().endswith("x\n```") and time.monotonic() - started < 10


def test_a_page_nesting_too_deeply_is_an_error_not_a_crash(web: LocalWeb,
                                                           tool_context: Ctx) -> None:
    result = fetch(local_tool(), tool_context(), web.url("/nested"))
    assert result.is_error and "its elements nest too deeply" in result.text


def test_a_page_that_outlasts_the_deadline_is_stopped_there_and_its_converter_killed(
        web: LocalWeb, tool_context: Ctx) -> None:
    started = time.monotonic()
    result = fetch(local_tool(limits=FetchLimits(total_s=2.0)), tool_context(),
                   web.url("/amplified"))
    assert result.is_error and "no complete answer within 2 s" in result.text
    assert time.monotonic() - started < 5
    assert not [c for c in _children() if "web_content.py" in c]


def test_a_long_title_is_cut(web: LocalWeb, tool_context: Ctx) -> None:
    result = fetch(local_tool(), tool_context(), web.url("/long-title"))
    title = next(line for line in result.text.splitlines() if line.startswith("Title: "))
    assert len(title) == len("Title: ") + MAX_TITLE and len(result.text) < 2000


def test_no_more_html_converters_run_at_once_than_the_slots(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each converter may take 1 GiB: ten fetches at once held ten (from a
    review). The slots are counted around the child's run."""
    from gateway.tools import web_content

    running, peak = 0, 0

    async def counted(request: str, body: bytes) -> web_content.Rendered:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.05)
        running -= 1
        return web_content.Rendered("", "", False)

    monkeypatch.setattr(web_content, "_render", counted)

    async def go() -> None:
        await asyncio.gather(*(web_content.render_html(b"<p>x</p>", None, 100, 5)
                               for _ in range(8)))

    asyncio.run(go())
    assert peak == web_content.RENDERERS
