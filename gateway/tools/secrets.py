"""Secrets in text: a table of credential shapes, one entry per kind, and
the scanner that finds them (what Edit, Write and NotebookEdit refuse to
write is decided in :mod:`.secret_writes`).

A shape alone is often too loose — forty base64 characters are also a hash
or a path — so an entry may carry a check: a checksum (GitHub's and npm's
tokens end in a CRC32 of their random part), the structure a key decodes
to (DER, ``openssh-key-v1``, a PyPI macaroon), a required context (an AWS
secret key beside its key id or under its name), or the randomness a real
key has and a placeholder lacks. So documented examples
(``AKIAIOSFODNN7EXAMPLE``), placeholders (``ghp_xxxx…``, ``<your-key>``),
public keys, certificates, hashes, UUIDs and code that only names a prefix
(``token.startswith("ghp_")``) are not taken for secrets.

JWTs count only while their own claims say they work: signed (not
``alg: none``) and with an ``exp`` still ahead. Test fixtures and
documentation carry expired or expiry-less examples (jwt.io's own), and a
refusal of every JWT would refuse ordinary test code; a token that is still
valid opens what it was issued for to whoever reads the file."""

from __future__ import annotations

import base64
import binascii
import functools
import heapq
import itertools
import json
import math
import re
import time
import zlib
from collections import Counter
from collections.abc import Callable

from regexes import regex
from values import valueclass

#: a check a match must pass to count: its groups, and ``m.string`` for context
Check = Callable[[re.Match[str]], bool]


@valueclass
class SecretKind:
    """One kind of secret: what it is called in a refusal, its shape (a
    regex, compiled on first use: a session that never writes does not
    pay for it), the literals one of which any match holds (a cheap
    substring test spares the regex most texts), and the check a loose
    shape needs."""

    name: str
    regex: str
    hints: tuple[str, ...]
    check: Check | None = None
    flags: int = 0

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compile(self.regex, self.flags)


@functools.cache
def _compile(regex: str, flags: int) -> re.Pattern[str]:
    return re.compile(regex, flags)


@valueclass
class Finding:
    """A secret found: its kind and where it is (offsets into the text
    scanned, the line counted from 1). Never the secret itself."""

    kind: str
    start: int
    end: int
    line: int


# -- checks ------------------------------------------------------------------

#: words that mark a value as a stand-in, looked for all in lower or all
#: in upper case (AWS's documented keys end in EXAMPLE, templates say
#: "your" or "xxxx"); a mixed-case "YoUr" is what a random key may hold
_PLACEHOLDER_WORDS = ("example", "xxxx", "your", "redacted", "dummy", "placeholder",
                      "changeme", "sample", "fake", "insert", "replace", "here")
_TEMPLATE = regex(r"\.\.\.|[<>{}$*]|(.)\1{5}")
_HEX = regex(r"[0-9a-fA-F]+")


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def _ascending_run(value: str, length: int = 6) -> bool:
    """``123456``, ``abcdef``: typed, not drawn (a random 36-character
    base62 string holds such a run about once in thirty million)."""
    run = 1
    for a, b in itertools.pairwise(value):
        run = run + 1 if ord(b) == ord(a) + 1 else 1
        if run >= length:
            return True
    return False


def looks_random(value: str) -> bool:
    """What a generated key is and a placeholder is not: no stand-in word,
    no template marks, no long repeat or run, and the spread of characters
    a draw from its alphabet has (0.6 of the most its length and alphabet
    — hex, or base64's — allow)."""
    if any(w in value or w.upper() in value for w in _PLACEHOLDER_WORDS) \
            or _TEMPLATE.search(value):
        return False
    if _ascending_run(value):
        return False
    alphabet = 16 if _HEX.fullmatch(value) else 64
    return _entropy(value) >= 0.6 * math.log2(min(max(len(value), 2), alphabet))


def _random_part(m: re.Match[str]) -> str:
    groups = m.groupdict()
    return groups.get("r") or groups.get("v") or m[0]


def _random(m: re.Match[str]) -> bool:
    return looks_random(_random_part(m))


_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _base62(number: int, width: int) -> str:
    digits = ""
    while number:
        number, digit = divmod(number, 62)
        digits = _BASE62[digit] + digits
    return digits.rjust(width, "0")


def crc_token(m: re.Match[str]) -> bool:
    """GitHub's and npm's token format: 30 random characters, then the
    CRC32 of those 30 in base62 (6 characters). A made-up token — the
    documentation's ``ghp_16C7e42F…`` — fails it; a real one always passes."""
    body = m["r"]
    return _base62(zlib.crc32(body[:30].encode()), 6) == body[30:]


def _b64decode(text: str) -> bytes | None:
    """Standard or URL-safe base64, padding optional; None if it is not."""
    text = text.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


#: a key's lines as source code writes them: each in a string literal
#: (``"b3Bl…\\n" +``, a JSON array of lines as in a notebook's source, a
#: ``b"…"`` prefix) or continued by a backslash. What is not base64 goes —
#: quotes, blanks, the ``,`` ``(`` ``)`` ``;`` ``\\`` around literals, a
#: string prefix, a ``+`` standing alone (base64's own ``+`` touches its
#: characters): such a body did not decode, so the key went unrefused
#: (reproducer: Write ``k.py`` with ssh-keygen's key lines each in
#: ``"…\\n"``, or Write a notebook holding the key as a cell's source).
_NOT_BASE64 = regex(r"""[\s"'`,();\\]+|(?<![A-Za-z0-9+/=])[rRbBuU]{1,2}(?=["'`])"""
                         r"|(?<![A-Za-z0-9+/=])\+(?![A-Za-z0-9+/])")
_ARMOR_HEADER = regex(r"""(?:^|[\s"'`(])([A-Za-z][A-Za-z-]*): """)
_ARMOR_CRC = regex(r"=[A-Za-z0-9+/]{4}")


def armor_body(body: str) -> tuple[str, bool]:
    """The base64 of an armored block's body, its escaped line breaks
    decoded, headers and checksum left out; and whether a header says it is
    encrypted (legacy PEM: the body is then ciphertext, not DER)."""
    kept, encrypted = [], False
    for line in body.replace("\\r", "").replace("\\n", "\n").split("\n"):
        header = _ARMOR_HEADER.search(line) if ": " in line else None
        if header is not None:
            encrypted = encrypted or header[1] == "Proc-Type"
            continue
        cleaned = _NOT_BASE64.sub("", line)
        if not _ARMOR_CRC.fullmatch(cleaned):
            kept.append(cleaned)
    return "".join(kept), encrypted


def armored_key(m: re.Match[str]) -> bool:
    """An armored private key whose body is one: base64 that decodes to at
    least 64 bytes of the structure its label names — DER (a SEQUENCE) for
    PKCS#1/PKCS#8/SEC1, ``openssh-key-v1`` for OpenSSH, an OpenPGP packet
    for PGP. ``MIIE...`` in a README, or a body of x's, is not."""
    body, encrypted = armor_body(m["body"])
    data = _b64decode(body)
    if data is None or len(data) < 64:
        return False
    label = m["label"]
    if "OPENSSH" in label:
        return data.startswith(b"openssh-key-v1\0")
    if "PGP" in label:
        return bool(data[0] & 0x80)
    return encrypted or data[0] == 0x30


def pypi_macaroon(m: re.Match[str]) -> bool:
    """A PyPI token is a macaroon whose first field names the index."""
    data = _b64decode(m["r"])
    return data is not None and (b"pypi.org" in data[:48])


_AWS_KEY_ID = regex(r"(?:AKIA|ASIA)[A-Z2-7]{16}")
_AWS_SECRET_NAME = regex(r"(?i:secret_?(?:access_?)?key)[\"']?\s*[:=]\s*[\"']?$")


def near_aws_key_id(m: re.Match[str]) -> bool:
    """Forty base64 characters are an AWS secret key only where one is
    expected: right after a name saying so, or near its key id. A git
    hash (hex) or a path never is."""
    value = m["v"]
    if re.fullmatch(r"[0-9a-f]{40}", value) or not looks_random(value):
        return False
    text = m.string
    named = _AWS_SECRET_NAME.search(text[max(0, m.start() - 48):m.start()])
    beside = _AWS_KEY_ID.search(text, max(0, m.start() - 240), m.end() + 240)
    return named is not None or beside is not None


def mixed_case_random(m: re.Match[str]) -> bool:
    """Random, and in both cases: a Hugging Face token is; an identifier
    that happens to follow ``hf_`` (``hf_hubdownloadcachedirectory…``) is not."""
    value = _random_part(m)
    return looks_random(value) and not value.islower() and not value.isupper()


def _json_part(part: str) -> object:
    data = _b64decode(part)
    try:
        return json.loads(data) if data is not None else None
    except ValueError:
        return None


def jwt_in_force(m: re.Match[str]) -> bool:
    """Signed, and its ``exp`` still ahead (see the module's docstring)."""
    header, claims = _json_part(m["h"]), _json_part(m["p"])
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return False
    if str(header.get("alg", "none")).lower() == "none":
        return False
    exp = claims.get("exp")
    return isinstance(exp, int | float) and not isinstance(exp, bool) and exp > time.time()


# -- the table -----------------------------------------------------------------

_EDGE = r"(?<![A-Za-z0-9_])"
_END = r"(?![A-Za-z0-9_])"


def _armored(label: str) -> str:
    """BEGIN/END lines around a body; newlines may be written as ``\\n``
    (a key in JSON or a dotenv line). The body ends at the first ``-----``,
    taken possessively: a lazy ``.{40,16000}?`` walked 16,000 characters
    from every BEGIN line that had no END (reproducer: Write 1 MB of
    ``-----BEGIN PRIVATE KEY-----AAAA…``: seconds per megabyte, twice)."""
    return (rf"-----BEGIN (?P<label>{label})-----(?P<body>(?:[^-]|-(?!----)){{40,16000}}+)"
            r"-----END (?P=label)-----")


def _kind(name: str, pattern: str, hints: tuple[str, ...], check: Check | None = _random,
          flags: int = 0) -> SecretKind:
    return SecretKind(name, pattern, hints, check, flags)


#: the armored keys, also looked for inside base64 (:func:`encoded_key`)
ARMORED_KINDS: tuple[SecretKind, ...] = (
    _kind("a Google Cloud service-account private key",
          r'"private_key"\s*:\s*"(?P<v>' + _armored("PRIVATE KEY") + r')', ('"private_key"',),
          armored_key, re.S),
    _kind("an OpenSSH private key", _armored("OPENSSH PRIVATE KEY"), ("OPENSSH PRIVATE",),
          armored_key, re.S),
    _kind("a PGP private key block", _armored("PGP PRIVATE KEY BLOCK"), ("PGP PRIVATE",),
          armored_key, re.S),
    _kind("a PEM private key", _armored(r"(?:[A-Z0-9]+ )*PRIVATE KEY"), ("PRIVATE KEY-----",),
          armored_key, re.S),
)


def encoded_key(m: re.Match[str]) -> bool:
    """Base64 whose text is an armored private key: a Kubernetes Secret's
    ``tls.key: LS0tLS1CRUdJTi…``, a CI variable. Not found before
    (reproducer: Write ``secret.yaml`` holding ``base64 key.pem``)."""
    blob = re.sub(r"\s+", "", m[0])
    data = _b64decode(blob[:len(blob) - len(blob) % 4])
    return data is not None and bool(scan(data.decode("latin-1"), ARMORED_KINDS))


#: the kinds, most specific first: where two overlap, the earlier names it
SECRET_KINDS: tuple[SecretKind, ...] = (
    *ARMORED_KINDS,
    # "-----BEGIN" in base64, then the rest (wrapped lines too), taken whole
    _kind("a base64-encoded private key", r"(?<![A-Za-z0-9+/])LS0tLS1CRUdJT"
          r"(?:[A-Za-z0-9+/]|\r?\n[ \t]*){80,24000}+={0,2}", ("LS0tLS1CRUdJT",),
          encoded_key),
    _kind("a PuTTY private key",
          r"(?m:^)PuTTY-User-Key-File-\d: [^\n]{1,1000}\n(?:[^\n]{0,1000}\n){1,40}?"
          r"Private-Lines: \d+\r?\n"
          r"(?P<r>[A-Za-z0-9+/=\r\n]{40,})", ("PuTTY-User-Key-File",)),
    _kind("an AWS access key id", r"(?<![A-Z0-9])(?:AKIA|ASIA)(?P<r>[A-Z2-7]{16})(?![A-Z0-9])",
          ("AKIA", "ASIA")),
    _kind("an AWS secret access key", r"(?<![A-Za-z0-9/+=])(?P<v>[A-Za-z0-9/+]{40})"
          r"(?![A-Za-z0-9/+=])", ("AKIA", "ASIA", "ecret", "ECRET"), near_aws_key_id),
    _kind("a GitHub token", _EDGE + r"gh[pousr]_(?P<r>[A-Za-z0-9]{36})" + _END,
          ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), crc_token),
    _kind("a GitHub fine-grained token",
          _EDGE + r"github_pat_(?P<r>[A-Za-z0-9]{22}_[A-Za-z0-9]{59})" + _END, ("github_pat_",)),
    _kind("a GitLab token", _EDGE + r"gl(?:pat|dt|rt|ptt)-(?P<r>[A-Za-z0-9_-]{20,})", ("gl",)),
    _kind("a Slack token", _EDGE + r"xox[abprs]-(?:\d+-)+(?P<r>[A-Za-z0-9]{16,})", ("xox",)),
    _kind("a Slack webhook URL", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/"
          r"T[A-Z0-9]{6,}/[A-Z0-9]{6,}/(?:\d+/)?(?P<r>[A-Za-z0-9]{20,})", ("hooks.slack.com",)),
    _kind("a Stripe live key", _EDGE + r"[sr]k_live_(?P<r>[A-Za-z0-9]{24,})", ("k_live_",)),
    _kind("a Google API key", _EDGE + r"AIza(?P<r>[0-9A-Za-z_-]{35})" + r"(?![0-9A-Za-z_-])",
          ("AIza",)),
    _kind("an Anthropic API key", _EDGE + r"sk-ant-[a-z]+\d\d-(?P<r>[A-Za-z0-9_-]{80,})",
          ("sk-ant-",)),
    _kind("an OpenAI API key", _EDGE + r"sk-(?:(?:proj|svcacct|admin)-(?P<r>[A-Za-z0-9_-]{40,})"
          r"|[A-Za-z0-9_-]{8,}T3BlbkFJ[A-Za-z0-9_-]{8,})", ("sk-",)),
    _kind("an npm token", _EDGE + r"npm_(?P<r>[A-Za-z0-9]{36})" + _END, ("npm_",), crc_token),
    _kind("a PyPI token", _EDGE + r"pypi-(?P<r>AgE[A-Za-z0-9_-]{60,})", ("pypi-AgE",),
          pypi_macaroon),
    _kind("a Twilio API key", _EDGE + r"SK(?P<r>[0-9a-f]{32})" + _END, ("SK",)),
    _kind("a SendGrid API key", _EDGE + r"SG\.[A-Za-z0-9_-]{22}\.(?P<r>[A-Za-z0-9_-]{43})",
          ("SG.",)),
    _kind("a DigitalOcean token", _EDGE + r"do[opr]_v1_(?P<r>[a-f0-9]{64})" + _END, ("_v1_",)),
    _kind("a Shopify access token", _EDGE + r"shp(?:at|ca|pa|ss)_(?P<r>[a-fA-F0-9]{32})" + _END,
          ("shp",)),
    _kind("a Hugging Face token", _EDGE + r"hf_(?P<r>[A-Za-z0-9]{34,40})" + _END, ("hf_",),
          mixed_case_random),
    _kind("a JWT still in force", _EDGE + r"(?P<h>eyJ[A-Za-z0-9_-]{8,})\.(?P<p>eyJ[A-Za-z0-9_-]+)"
          r"\.[A-Za-z0-9_-]{16,}", ("eyJ",), jwt_in_force),
)


# -- the scanner -------------------------------------------------------------------

def scan(text: str, kinds: tuple[SecretKind, ...] = SECRET_KINDS) -> list[Finding]:
    """Every secret in ``text``, in order; where two overlap, the kind
    listed first (the GCP key over the PEM block inside it).

    Linear in the findings: each kind's matches are in order and apart, so
    they are merged into those kept so far in one walk, and lines are
    counted once. Comparing every finding with every one kept, and
    counting the lines before each from the start, made a Write of 20,000
    AWS key ids take 9 s, and of 200,000 a quarter of an hour, the gateway
    stalled meanwhile (reproducer: Write ``ids.txt``, one ``AKIA…`` a line)."""
    kept: list[tuple[int, int, str]] = []
    for kind in kinds:
        if not any(h in text for h in kind.hints):
            continue
        pattern, value = kind.pattern, "v" in kind.pattern.groupindex
        hits = [(*(m.span("v") if value else m.span()), kind.name)
                for m in pattern.finditer(text) if kind.check is None or kind.check(m)]
        if hits:
            kept = list(heapq.merge(kept, _apart(hits, kept)))
    found, line, counted = [], 1, 0
    for start, end, name in kept:
        line += text.count("\n", counted, start)
        counted = start
        found.append(Finding(name, start, end, line))
    return found


def _apart(hits: list[tuple[int, int, str]],
           kept: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The ``hits`` (in order) that overlap none of ``kept`` (in order, apart)."""
    apart, i = [], 0
    for hit in hits:
        while i < len(kept) and kept[i][1] <= hit[0]:
            i += 1
        if i == len(kept) or kept[i][0] >= hit[1]:
            apart.append(hit)
    return apart
