"""Read's PDFs: the text of the pages asked for (``pages``: ``"3"``,
``"1-5"``, ``"2,4-6"``), each under a ``--- page 3 of 12 ---`` heading; at
most MAX_PAGES_PER_READ a call, and a PDF of more than INLINE_PAGES read
without ``pages`` gives its page count and asks for them (the reference's
rules).

The text is extracted by pypdf in a child process (:mod:`.pdf_worker`),
never in the gateway. A thread could not be stopped: pypdf is pure Python
and a PDF with a million-page tree, a cyclic object graph or a content
stream of millions of operators keeps it busy for minutes — a thread that
cannot be killed would hold a core and its memory long after the call gave
up, while a child is killed at the deadline and has its own memory and CPU
ceiling. The child gets the bytes on stdin, so the file is opened once,
through Read's own checked path, and pypdf is never imported here."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from typing import Any, BinaryIO

from regexes import regex

from ..messages import TextBlock
from .read_text import MAX_TEXT_BYTES, Shown

MAX_PAGES_PER_READ = 20
INLINE_PAGES = 10
MAX_PDF_BYTES = 64 << 20
#: the child's wall-clock deadline, and its CPU and address-space ceilings
PDF_TIMEOUT_S = 30.0
PDF_MEMORY_BYTES = 1 << 30
#: one page's text at most (the child cuts it: the pipe stays small)
PAGE_CHARS = 100_000
#: workers running at once in this process, each up to PDF_MEMORY_BYTES:
#: ten parallel Reads of a 59 KB PDF (a content stream of 30 M operands)
#: ran six workers at once, 1.3 GB — up to 10 GB at the ceiling. A Read
#: past the slots waits its turn, at most one deadline
PDF_WORKERS = 2
_WORKERS = threading.BoundedSemaphore(PDF_WORKERS)

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pdf_worker.py")
_RANGE = regex(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?")

PAGES_HELP = ('pages is one page ("3"), a range ("1-5") or a list of both ("2,4-6"), '
              f"1-based, at most {MAX_PAGES_PER_READ} pages")


def parse_pages(spec: str) -> tuple[int, ...] | str:
    """The pages ``spec`` names, in order and once each, or why it names
    none that can be read."""
    pages: dict[int, None] = {}
    for part in spec.split(","):
        match = _RANGE.fullmatch(part)
        if match is None:
            return f"pages {spec!r} is not a page range: {PAGES_HELP}"
        first = int(match[1])
        last = int(match[2] or first)
        if first < 1 or last < first:
            return f"pages {spec!r}: {part.strip()!r} names no page ({PAGES_HELP})"
        # counted before the range is made: "1-999999999" is one short part
        if last - first >= MAX_PAGES_PER_READ or len(pages.keys() | range(first, last + 1)) \
                > MAX_PAGES_PER_READ:
            return (f"pages {spec!r} names more than {MAX_PAGES_PER_READ} pages, the most one "
                    "Read extracts: read them in several calls")
        pages.update(dict.fromkeys(range(first, last + 1)))
    return tuple(pages)


def read_pdf(stream: BinaryIO, st: os.stat_result, pages: str | None,
             display: str) -> Shown | str:
    """The pages of the open PDF ``stream`` that ``pages`` names (all of a
    short one when None), or a one-line error."""
    if st.st_size > MAX_PDF_BYTES:
        return (f"{display} is a PDF of {st.st_size} bytes, over the {MAX_PDF_BYTES >> 20} MiB "
                "Read extracts text from; use Bash (pdftotext -f N -l M) instead.")
    wanted = None if pages is None else parse_pages(pages)
    if isinstance(wanted, str):
        return wanted
    stream.seek(0)
    blob = stream.read(MAX_PDF_BYTES + 1)
    reply = _extract(blob, wanted, display)
    if isinstance(reply, str):
        return reply
    count = int(reply["count"])
    texts = reply.get("pages")
    if texts is None:
        return _not_extracted(display, count, wanted)
    text, cut = _format([(int(p), str(t)) for p, t in texts], count)
    shown_all = wanted is None or len(wanted) == count
    return Shown((TextBlock(text),), hashlib.sha256(blob).hexdigest(), shown_all and not cut)


def _extract(blob: bytes, wanted: tuple[int, ...] | None, display: str) -> dict[str, Any] | str:
    request = {"pages": None if wanted is None else list(wanted), "inline": INLINE_PAGES,
               "page_chars": PAGE_CHARS, "memory": PDF_MEMORY_BYTES,
               "cpu": int(PDF_TIMEOUT_S) + 1}
    if not _WORKERS.acquire(timeout=PDF_TIMEOUT_S):
        return (f"The PDF reader is busy with {PDF_WORKERS} other PDFs; read {display} again "
                "in a moment (or fewer PDFs at once).")
    try:
        # -I: no environment variables, no user site, not the script's
        # directory on the path (gateway/tools/glob.py would shadow glob);
        # an environment of its own (none of the gateway's keys)
        done = subprocess.run([sys.executable, "-I", WORKER, json.dumps(request)], input=blob,
                              capture_output=True, timeout=PDF_TIMEOUT_S, check=False,
                              env={"LC_ALL": "C.UTF-8"}, cwd="/")
    except subprocess.TimeoutExpired:
        return (f"Extracting the text of {display} took over {PDF_TIMEOUT_S:g} s and was "
                "stopped (a huge or pathological PDF); ask for fewer pages, or use Bash "
                "(pdftotext).")
    except OSError as exc:
        return f"The PDF reader could not start ({exc.strerror or exc})."
    finally:
        _WORKERS.release()
    try:
        reply: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        how = f"signal {-done.returncode}" if done.returncode < 0 else f"exit {done.returncode}"
        return (f"The PDF reader stopped on {display} ({how}: over its CPU or memory ceiling, "
                "or a crash); use Bash (pdftotext) instead.")
    error = reply.get("error")
    if error is not None:
        return _error_text(str(error), str(reply.get("detail", "")), display)
    return reply


_ERRORS = {
    "password": "{path} is an encrypted PDF that needs a password; Read opens only PDFs "
                "whose password is empty.",
    "crypto": "{path} is an encrypted PDF whose cipher this gateway cannot decrypt ({detail}).",
    "memory": "{path} needs more than the PDF reader's memory ceiling; use Bash (pdftotext).",
    "malformed": "{path} is not a PDF that can be read ({detail}); look into it with Bash "
                 "(file, pdfinfo).",
}


def _error_text(kind: str, detail: str, display: str) -> str:
    template = _ERRORS.get(kind, _ERRORS["malformed"])
    return template.format(path=display, detail=detail.replace("\n", " ") or kind)


def _not_extracted(display: str, count: int, wanted: tuple[int, ...] | None) -> str:
    if wanted is None:
        return (f"{display} is a PDF of {count} pages, more than the {INLINE_PAGES} Read "
                f"shows at once: call Read again with pages (\"1-{min(count, 5)}\", say; at "
                f"most {MAX_PAGES_PER_READ} pages a call).")
    past = [p for p in wanted if p > count]
    return (f"{display} has {count} page{'s' if count != 1 else ''}: page {past[0]} is past "
            "its end.")


def _format(texts: list[tuple[int, str]], count: int) -> tuple[str, bool]:
    """Each page under its heading, within MAX_TEXT_BYTES in all (a page
    past the budget is cut, the pages after it left out, and the result
    says where to go on)."""
    parts: list[str] = []
    used = 0
    for n, (page, text) in enumerate(texts):
        body = text.strip() or ("[no text on this page: it may hold only images (a scan); "
                                "Read extracts text, not pictures]")
        part = f"--- page {page} of {count} ---\n{body}"
        size = len(part.encode())
        if used + size > MAX_TEXT_BYTES:
            room = max(0, MAX_TEXT_BYTES - used)
            kept = part.encode()[:room].decode("utf-8", "ignore")
            rest = [p for p, _ in texts[n + 1:]]
            left = f"; not shown: page(s) {', '.join(map(str, rest))}" if rest else ""
            parts.append(f"{kept}\n[page {page} cut: the {MAX_TEXT_BYTES // 1024} KiB a Read "
                         f"returns was reached{left}]")
            return "\n\n".join(parts), True
        used += size + 2
        parts.append(part)
    return "\n\n".join(parts), False
