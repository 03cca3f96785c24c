"""What WebFetch makes of a response body: HTML as markdown, text and JSON
as text, anything else refused by its type — decoded with the charset the
server names, and cut at a size with a marker saying so.

HTML goes through beautifulsoup4's stdlib parser (no C extension, so no
build step) and markdownify: both MIT-licensed and maintained (html2text,
the other candidate, is GPL-3.0, which this Apache-2.0 project does not
ship). Both are imported inside the functions that use them: ``shellgate
check`` never pays for them.

HTML is converted in a child process (this module run as a script,
``python -I web_content.py REQUEST``, the body on stdin, one JSON object
on stdout), never in the gateway: markdownify's own regexes are quadratic
in a run of blanks, and a thread cannot be stopped. Reproducer: a page of
``<pre>`` and 200,000 spaces held the gateway's every thread (the regex
engine keeps the interpreter's lock) for minutes, the 30 s deadline
never firing; a page nesting 100 ``<blockquote>`` around 80,000
paragraphs made a 5 s deadline return after 22 s. The child has its own
memory and CPU ceiling and is killed at the fetch's deadline."""

from __future__ import annotations

import codecs
import json
import os
import sys
import threading
import zlib
from typing import Any, Literal

from regexes import regex
from values import valueclass

#: media types read as text besides ``text/*``
TEXT_TYPES = frozenset({
    "application/json", "application/ld+json", "application/xml", "application/javascript",
    "application/ecmascript", "application/x-javascript", "application/yaml",
    "application/x-yaml", "application/toml", "application/x-sh", "application/graphql",
    "application/sql", "application/x-ndjson",
})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
#: elements whose content is no part of what a page says
_DROPPED = ("script", "style", "noscript", "template", "iframe", "object", "embed", "svg",
            "canvas", "head")
#: how much of an unlabelled body is looked at to tell text from binary
_SNIFF = 4096

Kind = Literal["html", "text", "binary"]


@valueclass
class MediaType:
    """A ``Content-Type`` header, split: the type in lowercase and its charset."""

    essence: str
    charset: str | None

    @classmethod
    def parse(cls, header: str | None) -> MediaType:
        if not header:
            return cls("", None)
        essence, *params = header.split(";")
        charset = None
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "charset":
                charset = value.strip().strip("\"'") or None
        return cls(essence.strip().lower(), charset)

    def kind(self) -> Kind | None:
        """HTML, text, binary — ``None`` when no type was sent (sniffed)."""
        if not self.essence:
            return None
        if self.essence in HTML_TYPES:
            return "html"
        if (self.essence.startswith("text/") or self.essence in TEXT_TYPES
                or self.essence.endswith(("+json", "+xml"))):
            return "text"
        return "binary"


#: the content codings decoded (one, at most): zlib's window bits for each
_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class Inflater:
    """One gzip or deflate stream, inflated a chunk at a time and never
    past what the cap leaves (``max_length``)."""

    def __init__(self, coding: str) -> None:
        self._coding, self._fed = coding, False
        self._z = zlib.decompressobj(_WBITS[coding])

    @classmethod
    def of(cls, codings: list[str]) -> Inflater | str | None:
        """The inflater the ``Content-Encoding`` values need (``None``:
        none), or how the body is sent if it is not one WebFetch decodes."""
        named = [c.strip().lower() for c in codings if c.strip().lower() not in ("", "identity")]
        if not named:
            return None
        if len(named) > 1 or named[0] not in _WBITS:
            return f"in {', '.join(named)}"
        return cls(named[0])

    def feed(self, data: bytes, room: int) -> bytes:
        """At most ``room + 1`` bytes of what ``data`` inflates to (one past
        the room says the cap was reached); ValueError if it is corrupt."""
        try:
            try:
                out = self._z.decompress(data, room + 1)
            except zlib.error:
                if self._coding != "deflate" or self._fed:
                    raise
                # "deflate" sent as a raw stream, without zlib's header
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                out = self._z.decompress(data, room + 1)
        except zlib.error as exc:
            raise ValueError(f"its {self._coding} body is corrupt ({exc})") from None
        self._fed = True
        return out


def sniff(head: bytes) -> Kind:
    """An unlabelled body: binary if it holds NUL bytes or is not UTF-8;
    HTML if it starts like a document; text otherwise."""
    sample = head[:_SNIFF]
    if b"\0" in sample:
        return "binary"
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(sample) - 4:  # not only a character cut at the sample's end
            return "binary"
        text = sample[:exc.start].decode("utf-8")
    start = text.lstrip()[:15].lower()
    return "html" if start.startswith(("<!doctype html", "<html")) else "text"


def decode(body: bytes, charset: str | None) -> str:
    """The body as text: the server's charset if it is one (see
    :func:`_known`), else UTF-8 (a byte-order mark honoured); undecodable
    bytes replaced."""
    if body.startswith(codecs.BOM_UTF8):
        return body[3:].decode("utf-8", "replace")
    return body.decode(_known(charset) or "utf-8", "replace")


#: a run of blanks in the page's text is cut to this: every quadratic
#: regex met on the way (markdownify's, a trailing-blank strip) is then
#: quadratic in this, not in the page
MAX_BLANKS = 64
_LONG_BLANKS = regex(rf"(?<!\s)\s{{{MAX_BLANKS + 1},}}")
#: a title longer than this is cut (it sits in the head, outside the text's cap)
MAX_TITLE = 300


def html_to_markdown(body: bytes, charset: str | None) -> tuple[str, str]:
    """The page's title and its content as markdown (scripts, styles,
    frames and inline images' data left out)."""
    from bs4 import BeautifulSoup  # noqa: PLC0415 - a fetch of HTML is the only user
    from markdownify import MarkdownConverter  # noqa: PLC0415

    soup = BeautifulSoup(body, "html.parser", from_encoding=_known(charset))
    title = " ".join(soup.title.get_text(" ").split())[:MAX_TITLE] if soup.title else ""
    for element in soup(list(_DROPPED)):
        element.decompose()
    for image in soup("img"):
        src = image.get("src")
        if isinstance(src, str) and src.startswith("data:"):
            image.decompose()  # a base64 image is megabytes of noise to a model
    for node in soup.find_all(string=_LONG_BLANKS):
        node.replace_with(_LONG_BLANKS.sub(lambda m: m[0][:MAX_BLANKS], node))
    markdown = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    return title, tidy(markdown)


#: codecs Python has that no web page is in: Python's own escapes, and
#: IDNA and punycode, the one quadratic, the other refusing "replace" —
#: ``charset=punycode`` on 400 KB of text/plain held the event loop 17 s
#: past a 3 s deadline, ``charset=idna`` raised out of the tool
_NOT_CHARSETS = frozenset({"idna", "punycode", "raw_unicode_escape", "unicode_escape",
                           "undefined", "mbcs", "oem"})


def _known(charset: str | None) -> str | None:
    """The codec a ``charset`` parameter names, if it is a text encoding a
    page may be in (``rot13`` and ``base64`` are codecs too)."""
    if not charset:
        return None
    try:
        info = codecs.lookup(charset)
    except LookupError:
        return None
    text = getattr(info, "_is_text_encoding", True)
    return info.name if text and info.name.replace("-", "_") not in _NOT_CHARSETS else None


_BLANK_RUNS = regex(r"\n{3,}")


def tidy(text: str) -> str:
    """Trailing blanks dropped, runs of blank lines made one (line by line:
    ``[ \t]+\n`` was quadratic in a run of blanks)."""
    lines = "\n".join(line.rstrip(" \t") for line in text.split("\n"))
    return _BLANK_RUNS.sub("\n\n", lines).strip()


def cap(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to ``limit`` characters at a line's end where one is
    near, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    cut = text.rfind("\n", limit - 2000, limit)
    return text[:cut if cut > 0 else limit], True


def render_text(body: bytes, charset: str | None, limit: int) -> tuple[str, bool]:
    """A text body as the model is shown it, cut at ``limit`` characters."""
    return cap(decode(body, charset), limit)


# -- HTML, in a child process ------------------------------------------------------

#: the child's address-space and CPU ceilings
RENDER_MEMORY_BYTES = 1 << 30
WORKER = os.path.abspath(__file__)


#: HTML converters running at once in a process
RENDERERS = 2
_RENDERERS = threading.BoundedSemaphore(RENDERERS)


@valueclass
class Rendered:
    title: str
    text: str
    clipped: bool


async def render_html(body: bytes, charset: str | None, limit: int,
                      cpu_s: float) -> Rendered | str:
    """The page converted by the child (see the module's docstring), or
    why it could not be. Cancelling the call (the fetch's deadline) kills
    the child."""
    import asyncio  # noqa: PLC0415 - only a fetch of HTML runs the child

    request = json.dumps({"charset": charset, "limit": limit, "memory": RENDER_MEMORY_BYTES,
                          "cpu": int(cpu_s) + 1})
    # at most RENDERERS children at once in the process, each up to 1 GiB:
    # ten fetches in parallel would otherwise hold ten (from a review); the
    # wait counts against the fetch's own deadline, which cancels it
    while not _RENDERERS.acquire(blocking=False):
        await asyncio.sleep(0.05)
    try:
        return await _render(request, body)
    finally:
        _RENDERERS.release()


async def _render(request: str, body: bytes) -> Rendered | str:
    import asyncio  # noqa: PLC0415

    try:
        # -I: no environment variables, no user site, not this directory on
        # the path (gateway/tools/glob.py would shadow glob); none of the
        # gateway's environment
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-I", WORKER, request, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env={"LC_ALL": "C.UTF-8"}, cwd="/")
    except OSError as exc:
        return f"the HTML converter could not start ({exc.strerror or exc})"
    try:
        out, _ = await child.communicate(body)
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
    try:
        reply = json.loads(out)
    except ValueError:
        return ("the HTML converter stopped (over its CPU or memory ceiling: a pathological "
                f"page; exit {child.returncode})")
    if not isinstance(reply, dict) or "text" not in reply:
        error = reply.get("error") if isinstance(reply, dict) else None
        return f"the HTML converter could not read the page: {error or 'no answer'}"
    return Rendered(str(reply["title"]), str(reply["text"]), bool(reply["clipped"]))


def _child(request: dict[str, Any]) -> dict[str, Any]:
    import resource  # noqa: PLC0415 - the child's only

    memory, cpu = request["memory"], request["cpu"]
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    body = sys.stdin.buffer.read()
    try:
        title, text = html_to_markdown(body, request["charset"])
    except MemoryError:
        return {"error": "it needs more memory than the converter's ceiling"}
    except RecursionError:
        return {"error": "its elements nest too deeply"}
    except Exception as exc:  # a parser's failure on hostile bytes is the answer
        return {"error": f"{type(exc).__name__}: {exc}"[:200]}
    text, clipped = cap(text, request["limit"])
    return {"title": title, "text": text, "clipped": clipped}


if __name__ == "__main__":
    sys.stdout.write(json.dumps(_child(json.loads(sys.argv[1]))))
