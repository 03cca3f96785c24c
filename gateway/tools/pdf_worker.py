"""Extracts a PDF's text for Read, in a process of its own: run as a
script by :mod:`.read_pdf` (``python -I pdf_worker.py REQUEST``), never
imported by the gateway. The PDF's bytes come on stdin — the gateway opened
the file through its own checked path, this process opens nothing — and
one JSON object goes to stdout:

- ``{"count": N}`` alone: the pages asked for were not extracted (one is
  past the end, or no pages were asked for and there are more than
  ``inline``);
- ``{"count": N, "pages": [[page, text], ...]}``: the text of each page;
- ``{"error": KIND, "detail": "..."}``: ``password`` (no empty password
  opens it), ``crypto`` (its cipher needs a package not installed),
  ``malformed``, ``memory``.

The request is ``{"pages": [1-based pages] | null, "inline": N,
"page_chars": N, "memory": bytes, "cpu": seconds}``."""

from __future__ import annotations

import io
import json
import logging
import resource
import sys
from typing import Any


def _limit(memory: int, cpu: int) -> None:
    """This process's own ceiling (set before the PDF is parsed): what no
    timeout in the parent can stop in time, a pathological object graph
    filling memory, ends here as an error."""
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


def extract(blob: bytes, request: dict[str, Any]) -> dict[str, Any]:
    from pypdf import PasswordType, PdfReader  # noqa: PLC0415 -- heavy; this process only
    from pypdf.errors import DependencyError  # noqa: PLC0415

    reader = PdfReader(io.BytesIO(blob), strict=False)
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")
        except DependencyError as exc:
            return {"error": "crypto", "detail": str(exc)[:200]}
        if opened == PasswordType.NOT_DECRYPTED:
            return {"error": "password", "detail": ""}
    count = len(reader.pages)
    wanted: list[int] | None = request["pages"]
    if wanted is None:
        if count > request["inline"]:
            return {"count": count}
        wanted = list(range(1, count + 1))
    if any(page > count for page in wanted):
        return {"count": count}
    limit = request["page_chars"]
    texts = [[page, _text(reader, page, limit)] for page in wanted]
    return {"count": count, "pages": texts}


def _text(reader: Any, page: int, limit: int) -> str:
    """One page's text; a page whose content cannot be read says so, and
    the other pages are still shown."""
    try:
        text: str = reader.pages[page - 1].extract_text()
    except MemoryError:
        raise
    except Exception as exc:  # one broken page is not a broken file
        return f"[the text of this page could not be extracted: {type(exc).__name__}]"
    return text if len(text) <= limit else text[:limit] + f"\n[page cut at {limit} characters]"


def main() -> int:
    request = json.loads(sys.argv[1])
    _limit(request["memory"], request["cpu"])
    logging.disable(logging.CRITICAL)  # pypdf's warnings about a sloppy file are noise here
    blob = sys.stdin.buffer.read()
    try:
        reply = extract(blob, request)
    except MemoryError:
        reply = {"error": "memory", "detail": ""}
    except Exception as exc:  # a parser's failure on hostile bytes is the answer, not a crash
        reply = {"error": "malformed", "detail": f"{type(exc).__name__}: {exc}"[:200]}
    sys.stdout.write(json.dumps(reply))
    return 0


if __name__ == "__main__":
    sys.exit(main())
