"""What WebFetch makes of a response body: HTML as markdown, text and JSON
as text, anything else refused by its type — decoded with the charset the
server names, and cut at a size with a marker saying so.

HTML goes through beautifulsoup4's stdlib parser (no C extension, so no
build step) and markdownify: both MIT-licensed and maintained (html2text,
the other candidate, is GPL-3.0, which this Apache-2.0 project does not
ship). Both are imported inside the functions that use them: ``shellgate
check`` never pays for them."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Literal

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


@dataclass(frozen=True, slots=True)
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
    """The body as text: the server's charset if Python knows it, else
    UTF-8 (a byte-order mark honoured); undecodable bytes replaced."""
    if body.startswith(codecs.BOM_UTF8):
        return body[3:].decode("utf-8", "replace")
    if charset:
        try:
            return body.decode(codecs.lookup(charset).name, "replace")
        except LookupError:
            pass
    return body.decode("utf-8", "replace")


def html_to_markdown(body: bytes, charset: str | None) -> tuple[str, str]:
    """The page's title and its content as markdown (scripts, styles,
    frames and inline images' data left out)."""
    from bs4 import BeautifulSoup  # noqa: PLC0415 - a fetch of HTML is the only user
    from markdownify import MarkdownConverter  # noqa: PLC0415

    soup = BeautifulSoup(body, "html.parser", from_encoding=_known(charset))
    title = " ".join(soup.title.get_text(" ").split()) if soup.title else ""
    for element in soup(list(_DROPPED)):
        element.decompose()
    for image in soup("img"):
        src = image.get("src")
        if isinstance(src, str) and src.startswith("data:"):
            image.decompose()  # a base64 image is megabytes of noise to a model
    markdown = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    return title, tidy(markdown)


def _known(charset: str | None) -> str | None:
    if not charset:
        return None
    try:
        return codecs.lookup(charset).name
    except LookupError:
        return None


_BLANK_RUNS = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")
_TRAILING = re.compile(r"[ \t]+\n")


def tidy(text: str) -> str:
    """Trailing blanks dropped, runs of blank lines made one."""
    return _BLANK_RUNS.sub("\n\n", _TRAILING.sub("\n", text)).strip()


def cap(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to ``limit`` characters at a line's end where one is
    near, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    cut = text.rfind("\n", limit - 2000, limit)
    return text[:cut if cut > 0 else limit], True


def render(body: bytes, kind: Kind, charset: str | None) -> tuple[str, str]:
    """The title (HTML only) and the text the model is shown."""
    if kind == "html":
        return html_to_markdown(body, charset)
    return "", decode(body, charset)
