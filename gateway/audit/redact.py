"""What the audit log may hold: secrets masked, large values cut.

A log of every call an agent made is a second copy of everything it saw and
typed — the ``curl -H 'Authorization: Bearer …'``, the ``.env`` it wrote.
Whoever can read the log must not learn those secrets from it, so the sink
passes every string of every event through :func:`scrub` before writing.

Two layers:

* by **name**: a value under a mapping key, an option (``--api-key x``) or an
  assignment (``GITHUB_TOKEN=…``, ``"password": "…"``) whose name reads as a
  secret (:func:`is_secret_name`) is replaced by ``***``;
* by **shape**: well-known credential formats (Anthropic, OpenAI, GitHub,
  GitLab, AWS, Slack, Google, Stripe, npm, Hugging Face keys, JWTs, PEM
  private keys, passwords in URLs) are
  masked wherever they appear, whatever the name around them.

The bias is deliberate: masking a harmless ``token: str`` in a file the
agent wrote costs a little readability; leaking a key costs the key. But
names are judged by their *last word*, so the commonest near misses stay
readable: ``--tokenizer=bpe``, ``KEYBOARD=us``, ``--author``, ``max_tokens``,
``SSH_AUTH_SOCK``, ``--password-file``.

Size: a string longer than :data:`MAX_CHARS` becomes a marker
``{"cut": true, "length": N, "sha256": H, "head": "…"}`` — the head
redacted *before* it was cut (a key straddling the cut is not left half
visible), the hash over the whole original value, so a file on disk can be
matched against what the agent wrote. Only cut strings are hashed: the hash
of a short value (a password) could be brute-forced back into it.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import math
import os
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any, Final

from regexes import regex
from values import Enum as ValueEnum
from values import fields, is_value

from .password_options import PASSWORD_OPTIONS, POSITIONAL_PASSWORDS


def _is_dataclass(value: object) -> bool:
    """A standard dataclass instance (without importing dataclasses: no
    dataclass can exist before someone imported it)."""
    found = sys.modules.get("dataclasses")
    return found is not None and found.is_dataclass(value) and not isinstance(value, type)

__all__ = ["MASK", "MAX_CHARS", "is_secret_name", "redact_text", "scrub"]

MASK: Final = "***"
#: strings longer than this are cut (a Write's content, a long heredoc)
MAX_CHARS: Final = 4096
#: deeper nesting is replaced by a marker (no RecursionError in the sink)
MAX_DEPTH: Final = 32
MAX_KEY_CHARS: Final = 256

# --- names -------------------------------------------------------------

#: a name whose last word ends so is a secret: PGPASSWORD, client_secret
_SECRET_ENDINGS = ("password", "passwd", "passphrase", "secret", "secrets", "token",
                   "credential", "credentials", "apikey", "privatekey", "cookie", "cookies")
#: a name whose last word is exactly one of these
_SECRET_WORDS = frozenset({"auth", "authorization", "pass", "pin"})
#: in an environment variable's name (all capitals) one of these words
#: anywhere makes it a secret (from a review: SECRET_KEY_BASE was logged)
_ANYWHERE = frozenset({"secret", "secrets", "token", "tokens", "password", "passwd",
                       "passphrase", "credential", "credentials", "apikey", "privatekey"})
#: "…_key" is a secret after one of these words (api-key, secret_key,
#: AWS_SECRET_ACCESS_KEY); a bare --key or sort_key is usually a file or a field
_KEY_QUALIFIERS = frozenset({"api", "access", "secret", "private", "client", "auth", "master",
                             "encryption", "signing", "license", "session", "app", "account",
                             "service", "subscription", "webhook"})


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)  # apiKey -> api_Key
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether a key, option or variable of this name holds a secret."""
    words = _words(name)
    if not words:
        return False
    if name.isupper() and _ANYWHERE.intersection(words):
        return True  # SECRET_KEY_BASE, GITHUB_TOKEN_RO: an environment name
    last = words[-1]
    if last in _SECRET_WORDS or last.endswith(_SECRET_ENDINGS):
        return True
    if len(words) < 2:
        return False  # KEY, PWD (the working directory), key
    if last in ("key", "keys"):
        # an environment-style name (all capitals) ending in _KEY is one:
        # STRIPE_KEY, OPENAI_API_KEY
        return words[-2] in _KEY_QUALIFIERS or name.isupper()
    return last == "pwd"  # MYSQL_PWD


# --- shapes --------------------------------------------------------------

_EDGE = r"(?<![A-Za-z0-9])"
#: credential formats; the group kept visible names the kind of key, so a
#: reader knows what leaked without seeing it
_SHAPES: Final[tuple[re.Pattern[str], ...]] = tuple(regex(_EDGE + pattern) for pattern in (
    r"(sk-ant-)[A-Za-z0-9_-]{16,}",
    r"(sk-(?:proj-|svcacct-|admin-)?)(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{32,}",
    r"(gh[pousr]_)[A-Za-z0-9]{30,}",
    r"(github_pat_)[A-Za-z0-9_]{22,}",
    r"(glpat-)[A-Za-z0-9_-]{20,}",
    r"([sr]k_(?:live|test)_)[A-Za-z0-9]{16,}",
    r"(npm_)[A-Za-z0-9]{36}(?![A-Za-z0-9])",
    r"(hf_)[A-Za-z0-9]{34,}",
    r"(AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])",
    r"(xox[abposr]-)[A-Za-z0-9-]{10,}",
    r"(AIza)[0-9A-Za-z_-]{35}",
    r"(eyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
))

#: a private key, to its END line or — a key cut short — to the end
_PEM = regex(r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?)-----"
                  r".*?(?:-----END \1PRIVATE KEY\2-----|\Z)", re.S)
#: scheme://user:PASSWORD@host
_URL_PASSWORD = regex(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:)[^\s/?#@]+@")
#: a cookie header's value runs to the end of the line (several name=value)
_COOKIE = regex(r"(?im)((?<![\w-])(?:set-)?cookie\s*:\s*)[^\r\n'\"]+")
#: --name=value, -name value (not --flag --other, nor --with-token < file)
_OPTION = regex(r"""(?<![\w-])(--?([A-Za-z][\w-]*))(=|[ \t]+(?![-<>|;&]))"""
                     r"""("(?:[^"\\]|\\.)*"|'[^']*'|[^\s'"]+)""")
#: NAME=value, name: value, "name": "value", 'name': 'value' — an auth
#: scheme word (Authorization: Bearer x) stays visible
_ASSIGN = regex(r"""(["']?)(?<![\w.-])([A-Za-z_][\w.-]*)\1(\s*[:=]\s*)"""
                     r"""((?i:bearer|basic|token|digest|negotiate|bot)[ \t]+)?"""
                     r"""("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s'",;&|)}\]]+)""")


_VALUE = r"""('[^'\n]*'|"[^"\n]*"|[^\s'"|;&]+)"""
_SAME_COMMAND = r"[^\n|;&]*?"
#: a program's own way of taking a secret as an argument (from a review:
#: `mysql -pS3cr3t`, `curl -u admin:hunter2`, `sshpass -p x` were logged);
#: group 1 is kept, group 2 masked
def _option_pattern(names: tuple[str, ...], option: str, form: str) -> str:
    """The pattern masking ``option``'s password for ``names`` (see
    :mod:`.password_options` for the forms); group 1 kept, group 2 masked."""
    program = rf"(?<![\w.-])(?:{'|'.join(re.escape(n) for n in names)})\b{_SAME_COMMAND}"
    opt = re.escape(option)
    if form == "attached":
        return rf"({program}\s{opt})(?=[^\s-]){_VALUE}"
    if form == "next":
        return rf"({program}\s{opt}\s+){_VALUE}"
    if form == "either":
        return rf"({program}\s{opt}\s*){_VALUE}"
    if form == "prefix":
        return rf"({program}\s{opt}){_VALUE}"
    sep = re.escape(form.removeprefix("user"))
    return rf"({program}\s{opt}(?:=|\s+)['\"]?[^\s{sep}'\"]*{sep}){_VALUE}"


def _positional_pattern(program: str, letter: str, before: int) -> tuple[str, str]:
    """``htpasswd -b FILE USER PASSWORD`` and, with ``-n`` (no file),
    ``htpasswd -nb USER PASSWORD``."""
    options = r"(?:\s+-\w+)*"
    word = r"\s+[^\s-]\S*"
    with_letter = rf"\s+-(?=\w*{letter})"
    return (rf"(\b{program}\b{options}{with_letter}(?!\w*n)\w+{options}{word * before}\s+)"
            f"{_VALUE}",
            rf"(\b{program}\b{options}{with_letter}(?=\w*n)\w+{options}"
            rf"{word * (before - 1)}\s+){_VALUE}")


#: a program's own way of taking a secret as an argument (from reviews:
#: `mysql -pS3cr3t`, `curl -u admin:hunter2`, `sshpass -p x`, `htpasswd -b`,
#: `keytool -storepass`, `ldapsearch -w`, `smbclient -U user%pass` were
#: logged); group 1 is kept, group 2 masked
_PROGRAM_SECRETS: Final[tuple[re.Pattern[str], ...]] = tuple(regex(p) for p in (
    *(_option_pattern(names, option, form) for names, options in PASSWORD_OPTIONS
      for option, form in options),
    *(p for row in POSITIONAL_PASSWORDS for p in _positional_pattern(*row)),
    # user:password of curl, wget and friends
    rf"((?<!\S)(?:-u|--user|--proxy-user|--http-user)(?:=|\s+)['\"]?[^\s:'\"/]*:)(?!//)"
    rf"{_VALUE}",
    rf"(\bpass:){_VALUE}",
    # the whole user part of an http(s) URL is a token (https://TOKEN@host:
    # a user name alone is never needed there); elsewhere a long one
    r"(\bhttps?://)([^\s/?#@:]+)(?=@)",
    r"(\b[A-Za-z][A-Za-z0-9+.-]*://)([A-Za-z0-9_.~-]{16,})(?=@)",
    # aws configure set aws_secret_access_key VALUE
    rf"(?i)(\bconfigure\s+set\s+\S*(?:secret|token|password|key)\S*\s+){_VALUE}",
    # SQL: CREATE USER … IDENTIFIED BY 'x'
    rf"(?i)(\bidentified\s+(?:with\s+\S+\s+)?by\s+){_VALUE}",
    # .netrc and prose: "password x" (the --password x form is the option rule's)
    rf"(?i)((?<![\w-])(?:password|passwd|passphrase)[ \t]+)(?![:=\s]){_VALUE}",
))
#: the program names of the table, for the trigger below
_PROGRAMS = sorted({n for names, _ in PASSWORD_OPTIONS for n in names}
                   | {row[0] for row in POSITIONAL_PASSWORDS})


def _pem(m: re.Match[str]) -> str:
    kind = f"{m.group(1)}PRIVATE KEY{m.group(2)}"
    return f"-----BEGIN {kind}-----{MASK}-----END {kind}-----"


def _quoted_mask(value: str) -> str:
    return f"{value[0]}{MASK}{value[0]}" if value[:1] in ("'", '"') else MASK


def _option(m: re.Match[str]) -> str:
    return f"{m.group(1)}{m.group(3)}{_quoted_mask(m.group(4))}"


def _assign(m: re.Match[str]) -> str:
    quote, name, sep, scheme = m.group(1), m.group(2), m.group(3), m.group(4) or ""
    return f"{quote}{name}{quote}{sep}{scheme}{_quoted_mask(m.group(5))}"


def _sub_named(pattern: re.Pattern[str], text: str,
               mask: Callable[[re.Match[str]], str]) -> str:
    """Replace the matches of ``pattern`` whose name (group 2) is a secret.
    After any other name the scan resumes right behind the name, not behind
    its value: the value of ``-m "use --password=x"`` or of
    ``https://host/?api_key=x`` may itself hold a secret assignment."""
    out: list[str] = []
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        if is_secret_name(m.group(2)):
            out.append(text[pos:m.start()])
            out.append(mask(m))
            pos = m.end()
        else:
            out.append(text[pos:m.end(2)])
            pos = m.end(2)
    out.append(text[pos:])
    return "".join(out)


#: what any of the patterns above needs somewhere in a text: a run long
#: enough to be a key, a JWT's start, a PEM line, a URL, or a word a secret's
#: name holds (each name is_secret_name accepts holds one). A text without
#: any — most of an event: ids, tool names, decisions — is returned as it
#: is, skipping some fifteen substitutions (they cost an event ~0.5 ms).
_TRIGGER = regex(
    r"[A-Za-z0-9_-]{16}|eyJ|-----BEGIN|://|(?<!\S)-u\b|(?i:--user|"
    r"--proxy-user|--http-user|identified|"
    # longest first, then by name: the same text in every process (the
    # build-time regex table is keyed by it)
    + "|".join(re.escape(word) for word in sorted(
        {*_SECRET_ENDINGS, *_SECRET_WORDS, *_PROGRAMS, "key", "pwd", "pass", "pin"},
        key=lambda word: (-len(word), word))) + ")")


def redact_text(text: str) -> str:
    """``text`` with every secret this module recognises replaced by
    ``***`` (the shape around it kept). Idempotent."""
    if _TRIGGER.search(text) is None:
        return text
    text = _PEM.sub(_pem, text)
    for pattern in _SHAPES:
        text = pattern.sub(rf"\1{MASK}", text)
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{MASK}@", text)
    text = _COOKIE.sub(lambda m: f"{m.group(1)}{MASK}", text)
    for pattern in _PROGRAM_SECRETS:
        text = pattern.sub(lambda m: f"{m.group(1)}{_quoted_mask(m.group(2))}", text)
    text = _sub_named(_OPTION, text, _option)
    return _sub_named(_ASSIGN, text, _assign)


# --- whole values --------------------------------------------------------

def _clean(text: str) -> str:
    """Lone surrogates (JSON's "\\ud800") cannot be written as UTF-8: they
    are kept visible as escapes instead of failing the write."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _bounded(text: str, limit: int) -> str | dict[str, Any]:
    """A string redacted, and cut to ``limit`` characters with its hash kept
    when longer. Only a window somewhat past the cut is redacted (a
    megabyte Write must not cost a megabyte of regex work per event); the
    window grows while redaction shrank it too close to the cut, so a
    secret is never half inside the kept head."""
    if len(text) <= limit:
        return redact_text(text)
    window = 2 * limit
    while True:
        head = redact_text(text[:window])
        if window >= len(text) or len(head) >= limit + 1024:
            break
        window *= 2
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return {"cut": True, "length": len(text), "sha256": digest, "head": head[:limit]}


#: the standard library's enumerations and the analyzer's (values/choices.py)
_ENUMS = (enum.Enum, ValueEnum)


def _enum(value: enum.Enum | ValueEnum) -> Any:
    # Decision.DENY is an IntEnum: written as "deny", not 2
    return value.value if isinstance(value.value, str) else value.name.lower()


def scrub(value: Any, *, limit: int = MAX_CHARS) -> Any:
    """``value`` made fit for the log: JSON-able (enums by name, tuples and
    sets as lists, paths and unknown objects as strings, NaN as a string),
    every string redacted and bounded, every string under a secret-named
    key masked whole."""
    return _scrub(value, 0, False, limit)


def _scrub(value: Any, depth: int, secret: bool, limit: int) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, _ENUMS):
        value = _enum(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        value = bytes(value).decode("utf-8", "replace")
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
        value = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    if isinstance(value, str):
        if secret and value:
            return MASK
        return _bounded(_clean(value), limit)
    if depth >= MAX_DEPTH:
        return "[nested too deeply]"
    dump: Callable[..., Any] | None = getattr(value, "model_dump", None)
    if dump is not None:  # a pydantic model: its JSON form
        value = dump(mode="json")
    elif is_value(value):
        value = {f.name: getattr(value, f.name) for f in fields(value)}
    elif _is_dataclass(value):  # someone else's dataclass: its fields, masked by name
        value = {name: getattr(value, name) for name in value.__dataclass_fields__}
    if isinstance(value, Mapping):
        return {_key(k): _scrub(v, depth + 1, secret or is_secret_name(str(k)), limit)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v, depth + 1, secret, limit) for v in value]
    if isinstance(value, set | frozenset):
        return [_scrub(v, depth + 1, secret, limit) for v in sorted(value, key=repr)]
    return _scrub(str(value), depth + 1, secret, limit)


def _key(key: object) -> str:
    text = redact_text(_clean(str(key.value if isinstance(key, _ENUMS) else key)))
    return text if len(text) <= MAX_KEY_CHARS else text[:MAX_KEY_CHARS] + "…"
