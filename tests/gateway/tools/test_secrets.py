"""The secret scanner on real key formats (keys made here by ssh-keygen,
openssl and gpg; tokens built here in their published formats, so that no
real-looking secret is committed), its near misses, and the refusal Edit
and Write make through the pipeline — with the allowSecretWrites glob
that lifts it."""

from __future__ import annotations

import asyncio
import base64
import json
import random
import shutil
import string
import subprocess
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.context import MemoryAudit
from gateway.messages import ToolResultMessage, ToolUse
from gateway.permissions import CliPermissions, load_permissions
from gateway.session import Session
from gateway.tools.secret_writes import glob_matches, introduced
from gateway.tools.secrets import scan

ALNUM = string.ascii_letters + string.digits
GMP62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


def draw(seed: str, n: int, alphabet: str = ALNUM) -> str:
    """Random characters, the same for the same seed (no flaky fixtures)."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


def crc_token(prefix: str, seed: str) -> str:
    """A token in GitHub's (and npm's) format: 30 random characters, then
    their CRC32 in base62, six characters."""
    body = draw(seed, 30)
    crc, digits = zlib.crc32(body.encode()), ""
    while crc:
        crc, d = divmod(crc, 62)
        digits = GMP62[d] + digits
    return prefix + body + digits.rjust(6, "0")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt(claims: dict[str, Any], alg: str = "HS256") -> str:
    header = b64url(json.dumps({"alg": alg, "typ": "JWT"}).encode())
    return f"{header}.{b64url(json.dumps(claims).encode())}.{draw('sig', 43)}"


def aws_key_id(seed: str) -> str:
    return "AKIA" + draw(seed, 16, string.ascii_uppercase + "234567")


# -- real keys -----------------------------------------------------------------------

def _run(*argv: str) -> None:
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed")
    subprocess.run(argv, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    where = tmp_path_factory.mktemp("keys")
    made: dict[str, str] = {}
    _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(where / "ed25519"))
    made["ed25519"], made["ed25519.pub"] = ((where / n).read_text()
                                            for n in ("ed25519", "ed25519.pub"))
    _run("ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-m", "PEM", "-N", "",
         "-f", str(where / "rsa"))
    made["rsa"] = (where / "rsa").read_text()
    _run("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-out", str(where / "ec.pem"))
    made["pkcs8"] = (where / "ec.pem").read_text()
    _run("openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-passout", "pass:x",
         "-in", str(where / "ec.pem"), "-out", str(where / "enc.pem"))
    made["encrypted"] = (where / "enc.pem").read_text()
    _run("openssl", "pkey", "-in", str(where / "ec.pem"), "-pubout", "-out", str(where / "pub"))
    made["public"] = (where / "pub").read_text()
    _run("openssl", "req", "-x509", "-key", str(where / "ec.pem"), "-subj", "/CN=t", "-days",
         "1", "-out", str(where / "cert.pem"))
    made["certificate"] = (where / "cert.pem").read_text()
    home = where / "gnupg"
    home.mkdir(mode=0o700)
    try:
        _run("gpg", "--homedir", str(home), "--batch", "--passphrase", "", "--quick-gen-key",
             "Test <t@test.invalid>", "ed25519", "sign", "never")
        made["pgp"] = subprocess.run(
            ["gpg", "--homedir", str(home), "--batch", "--pinentry-mode", "loopback",
             "--passphrase", "", "--armor", "--export-secret-keys"],
            check=True, capture_output=True, text=True, timeout=60).stdout
        yield made
    finally:
        if shutil.which("gpgconf"):  # the agent gpg started for this home
            subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "all"],
                           capture_output=True, timeout=30, check=False)


def putty_key() -> str:
    """A PuTTY key file's layout, its lines drawn here."""
    return ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: test\n"
            f"Public-Lines: 2\n{draw('pub', 64, ALNUM + '+/')}\n{draw('pub2', 4)}\n"
            f"Private-Lines: 1\n{draw('priv', 44, ALNUM + '+/')}\n"
            f"Private-MAC: {draw('mac', 64, '0123456789abcdef')}\n")


@pytest.mark.parametrize(("name", "kind"), [
    ("ed25519", "an OpenSSH private key"),
    ("rsa", "a PEM private key"),
    ("pkcs8", "a PEM private key"),
    ("encrypted", "a PEM private key"),
    ("pgp", "a PGP private key block"),
])
def test_real_private_keys_are_found(keys: dict[str, str], name: str, kind: str) -> None:
    found = scan("settings = 1\n\n" + keys[name])
    assert [(f.kind, f.line) for f in found] == [(kind, 3)]


def test_a_key_inside_a_service_account_json_is_named_as_such(keys: dict[str, str]) -> None:
    account = json.dumps({"type": "service_account", "project_id": "p",
                          "private_key": keys["pkcs8"], "client_email": "a@p.iam"}, indent=2)
    assert [f.kind for f in scan(account)] == ["a Google Cloud service-account private key"]


def test_a_key_written_with_escaped_newlines_is_found(keys: dict[str, str]) -> None:
    line = 'PRIVATE_KEY="' + keys["rsa"].replace("\n", "\\n") + '"\n'
    assert [f.kind for f in scan(line)] == ["a PEM private key"]


TOKENS: list[tuple[str, str]] = [
    ("an AWS access key id", f"aws_access_key_id = {aws_key_id('a')}"),
    ("a GitHub token", f'TOKEN = "{crc_token("ghp_", "gh")}"'),
    ("a GitHub token", f"{crc_token('ghs_', 'gh2')}"),
    ("a GitHub fine-grained token", f"github_pat_{draw('f1', 22)}_{draw('f2', 59)}"),
    ("a GitLab token", f"glpat-{draw('gl', 20)}"),
    ("a Slack token", f"xoxb-1234567890123-1234567890123-{draw('sl', 24)}"),
    ("a Slack webhook URL", "https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/"
                            + draw("hook", 24)),
    ("a Stripe live key", "sk_live_" + draw("st", 24)),
    ("a Stripe live key", "rk_live_" + draw("rk", 24)),
    ("a Google API key", "AIza" + draw("g", 35)),
    ("an Anthropic API key", "sk-ant-api03-" + draw("an", 93, ALNUM + "-_") + "AA"),
    ("an OpenAI API key", "sk-proj-" + draw("op", 64, ALNUM + "-_")),
    ("an OpenAI API key", "sk-" + draw("o1", 20) + "T3BlbkFJ" + draw("o2", 20)),
    ("an npm token", crc_token("npm_", "npm")),
    ("a PyPI token", "pypi-" + b64url(b"\x02\x01\x08pypi.org\x02\x01"
                                      + random.Random(7).randbytes(90))),
    ("a Twilio API key", "SK" + draw("tw", 32, "0123456789abcdef")),
    ("a SendGrid API key", f"SG.{draw('sg1', 22)}.{draw('sg2', 43)}"),
    ("a DigitalOcean token", "dop_v1_" + draw("do", 64, "0123456789abcdef")),
    ("a Shopify access token", "shpat_" + draw("sh", 32, "0123456789abcdef")),
    ("a Hugging Face token", "hf_" + draw("hf", 34, string.ascii_letters)),
    ("a JWT still in force", "Authorization: Bearer " + jwt({"sub": "1",
                                                            "exp": int(time.time()) + 3600})),
    ("a PuTTY private key", putty_key()),
]


@pytest.mark.parametrize(("kind", "text"), TOKENS)
def test_tokens_in_their_published_formats_are_found(kind: str, text: str) -> None:
    assert [f.kind for f in scan(f"# config\n{text}\n")] == [kind]


def test_an_aws_secret_key_is_found_beside_its_key_id_or_under_its_name() -> None:
    secret = draw("aws", 40, ALNUM + "/+")
    beside = f"[default]\naws_access_key_id = {aws_key_id('b')}\naws_secret_access_key = {secret}\n"
    assert [(f.kind, f.line) for f in scan(beside)] == [
        ("an AWS access key id", 2), ("an AWS secret access key", 3)]
    named = f'{{"SecretAccessKey": "{secret}"}}'
    assert [f.kind for f in scan(named)] == ["an AWS secret access key"]
    assert scan(f"checksum = {secret}") == []  # forty characters alone are not one


NEAR_MISSES: list[str] = [
    "AKIAIOSFODNN7EXAMPLE",  # AWS's documented key id
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "ghp_" + "x" * 36,
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",  # GitHub's documentation: no valid checksum
    "ghp_" + draw("nocrc", 36),  # the shape without the checksum
    "sk-ant-...",
    "ANTHROPIC_API_KEY=<your-key>",
    "OPENAI_API_KEY=sk-proj-YOUR_KEY_HERE_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "sk_live_" + "0" * 24,
    "AIza" + "X" * 35,
    "npm_" + "a" * 36,
    'if token.startswith("ghp_") or token.startswith("github_pat_"):',
    'PATTERN = re.compile(r"AKIA[0-9A-Z]{16}")',
    "prefixes = ['xoxb-', 'sk_live_', 'glpat-', 'hf_', 'SG.', 'dop_v1_', 'pypi-AgE']",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA...\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\n" + "x" * 64 + "\n-----END PRIVATE KEY-----",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "id = 123e4567-e89b-12d3-a456-426614174000",
    base64.b64encode(b"ordinary text about configuration and keys, nothing secret").decode(),
    # jwt.io's example: no expiry
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
    "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "Bearer " + jwt({"sub": "1", "exp": 1_000_000_000}),  # expired in 2001
    "Bearer " + jwt({"sub": "1", "exp": int(time.time()) + 3600}, alg="none"),
    "from huggingface_hub import hf_hub_download_from_the_cache_dir_x",
    "hf_" + "abcdefghij" * 4,
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_not_secrets(text: str) -> None:
    assert scan(text) == []


@pytest.mark.parametrize("name", ["ed25519.pub", "public", "certificate"])
def test_public_keys_and_certificates_are_not_secrets(keys: dict[str, str], name: str) -> None:
    assert scan(keys[name]) == []


# -- what a change introduces -----------------------------------------------------------

def test_a_secret_already_in_the_file_is_not_news() -> None:
    token = crc_token("ghp_", "old")
    before = f"a = 1\nTOKEN = '{token}'\nb = 2\n"
    assert introduced(before, before.replace("b = 2", "b = 3")) == []
    moved = f"TOKEN = '{token}'\nb = 2\na = 1\n"
    assert introduced(before, moved) == []


def test_a_new_secret_is_named_with_its_line_in_the_new_text() -> None:
    before = "a = 1\nb = 2\n"
    after = f"a = 1\nb = 2\nc = 3\nKEY = '{'sk_live_' + draw('n', 30)}'\n"
    assert [(f.kind, f.line) for f in introduced(before, after)] == [("a Stripe live key", 4)]


def test_a_secret_completed_by_a_change_counts() -> None:
    token = crc_token("ghp_", "split")
    before = f"TOKEN = '{token[:20]}'\n"
    assert [f.kind for f in introduced(before, f"TOKEN = '{token}'\n")] == ["a GitHub token"]


def test_a_change_far_inside_a_large_file_is_scanned_around_it_only() -> None:
    filler = "x = 1\n" * 200_000
    token = crc_token("ghp_", "deep")
    after = filler + f"T = '{token}'\n" + filler
    found = introduced(filler + filler, after)
    assert [(f.kind, f.line) for f in found] == [("a GitHub token", 200_001)]


# -- globs ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("pattern", "path", "expected"), [
    (".env.local", "/w/app/.env.local", True),
    ("*.secret", "/w/deep/dir/k.secret", True),
    ("*.secret", "/w/k.secret.bak", False),
    ("config/*.local", "/w/config/app.local", True),
    ("config/*.local", "/w/other/config/app.local", False),
    ("./config/**", "/w/config/a/b.txt", True),
    ("secrets", "/w/secrets/key.txt", True),
    ("~/.config/tool/**", "/h/.config/tool/credentials", True),
    ("~/.config/tool/**", "/w/.config/tool/credentials", False),
    ("/srv/creds/*.json", "/srv/creds/a.json", True),
    ("//srv/creds/*.json", "/srv/creds/a.json", True),
    ("/srv/creds/*.json", "/srv/creds/sub/a.json", False),
    ("**/fixtures/*.pem", "/w/tests/fixtures/k.pem", True),
    ("[ab].key", "/w/a.key", True),
    ("[ab].key", "/w/c.key", False),
])
def test_allow_secret_write_globs_match_gitignore_style(pattern: str, path: str,
                                                         expected: bool) -> None:
    assert glob_matches(pattern, path, workspace="/w", home="/h") is expected


# -- Edit and Write through the pipeline ------------------------------------------------------

@pytest.fixture
def open_session(workspace: Path, tmp_path: Path) -> Callable[..., Session]:
    def make(settings: dict[str, Any] | None = None) -> Session:
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        flag: str | None = None
        if settings is not None:
            flag = str(tmp_path / "flag-settings.json")
            Path(flag).write_text(json.dumps(settings))
        cli = CliPermissions(allowed_tools=("Read", "Edit", "Write"), settings_file=flag)
        permissions = load_permissions(str(workspace), str(home), cli, managed_dirs=[])
        return Session.open(str(workspace), permissions=permissions, home=str(home),
                            results_dir=str(tmp_path / "results"))
    return make


def call(session: Session, tool: str, **data: Any) -> ToolResultMessage:
    return asyncio.run(session.run(ToolUse("toolu_s", tool, data)))


def test_write_refuses_a_new_file_holding_a_secret(workspace: Path,
                                                   open_session: Callable[..., Session]) -> None:
    session = open_session()
    token = crc_token("ghp_", "w")
    path = workspace / "src" / "config.py"
    result = call(session, "Write", file_path=str(path), content=f"A = 1\nB = 2\nT = '{token}'\n")
    assert result.is_error
    assert "a GitHub token (line 3)" in result.text and "allowSecretWrites" in result.text
    assert token not in result.text and token[4:20] not in result.text
    assert not path.exists()
    audit = session.context.audit
    assert isinstance(audit, MemoryAudit)
    logged = [e for e in audit.events if e["event"] == "tool.validated"]
    assert logged and token not in json.dumps(logged)


def test_edit_refuses_to_add_a_secret_and_leaves_the_file(workspace: Path,
                                                         open_session: Callable[..., Session],
                                                         keys: dict[str, str]) -> None:
    session = open_session()
    path = workspace / "deploy.sh"
    path.write_text("#!/bin/sh\nset -e\n# key goes here\n")
    assert not call(session, "Read", file_path=str(path)).is_error
    result = call(session, "Edit", file_path=str(path), old_string="# key goes here\n",
                  new_string=f"cat > key <<EOF\n{keys['ed25519']}EOF\n")
    assert result.is_error and "an OpenSSH private key (line 4)" in result.text
    assert path.read_text() == "#!/bin/sh\nset -e\n# key goes here\n"


def test_an_unrelated_edit_of_a_file_holding_a_secret_goes_through(
        workspace: Path, open_session: Callable[..., Session]) -> None:
    session = open_session()
    key_id, secret = aws_key_id("kept"), draw("kept", 40, ALNUM + "/+")
    path = workspace / "credentials"
    path.write_text(f"[default]\naws_access_key_id = {key_id}\n"
                    f"aws_secret_access_key = {secret}\nregion = us-east-1\n")
    assert not call(session, "Read", file_path=str(path)).is_error
    edited = call(session, "Edit", file_path=str(path), old_string="us-east-1",
                  new_string="eu-west-1")
    assert not edited.is_error, edited.text
    rewritten = call(session, "Write", file_path=str(path),
                     content=f"[prod]\naws_secret_access_key = {secret}\n"
                             f"aws_access_key_id = {key_id}\n")
    assert not rewritten.is_error, rewritten.text
    added = call(session, "Write", file_path=str(path),
                 content=f"[prod]\naws_secret_access_key = {secret}\naws_access_key_id = "
                         f"{key_id}\nother = {crc_token('ghp_', 'new')}\n")
    assert added.is_error and "a GitHub token (line 4)" in added.text
    assert "AWS" not in added.text


def test_the_allow_secret_writes_glob_lets_it_through(workspace: Path,
                                                      open_session: Callable[..., Session]) -> None:
    session = open_session({"sandbox": {"filesystem": {"allowSecretWrites": ["*.local.env"]}}})
    assert session.context.allow_secret_writes == ("*.local.env",)
    token = "sk_live_" + draw("allowed", 30)
    allowed = workspace / "conf" / "stripe.local.env"
    assert not call(session, "Write", file_path=str(allowed), content=f"KEY={token}\n").is_error
    assert allowed.read_text() == f"KEY={token}\n"
    elsewhere = call(session, "Write", file_path=str(workspace / "stripe.py"),
                     content=f"KEY = '{token}'\n")
    assert elsewhere.is_error and "a Stripe live key (line 1)" in elsewhere.text


def test_a_link_named_like_an_allowed_file_does_not_carry_the_allowance(
        workspace: Path, open_session: Callable[..., Session]) -> None:
    session = open_session({"sandbox": {"filesystem": {"allowSecretWrites": ["*.local.env"]}}})
    (workspace / "app.py").write_text("")
    (workspace / "keys.local.env").symlink_to(workspace / "app.py")
    assert not call(session, "Read", file_path=str(workspace / "app.py")).is_error
    result = call(session, "Write", file_path=str(workspace / "keys.local.env"),
                  content=f"K={crc_token('ghp_', 'link')}\n")
    assert result.is_error and "a GitHub token" in result.text
    assert (workspace / "app.py").read_text() == ""


# -- attacks on the refusal (each found by a review; the reproducer is in the code) ----------

def _ids(n: int, seed: str = "ids") -> list[str]:
    rng = random.Random(seed)
    return ["AKIA" + "".join(rng.choice(string.ascii_uppercase + "234567") for _ in range(16))
            for _ in range(n)]


_TOKEN = crc_token("ghp_", "hidden")
_AWS_VALUE = draw("bare", 40, ALNUM + "/+")


@pytest.mark.parametrize(("before", "after"), [
    (f"T = 'X{_TOKEN}'\n", f"T = '{_TOKEN}'\n"),  # no edge before it: no token yet
    (f"T = '{_TOKEN}Z'\n", f"T = '{_TOKEN}'\n"),  # no edge after it
    (f"T = 'X{_TOKEN}'\n", f"T = 'X{_TOKEN}'\nU = '{_TOKEN}'\n"),  # copied out of its hiding
    (f"V = '{_AWS_VALUE}'\n", f"aws_secret_access_key = '{_AWS_VALUE}'\n"),  # its name added
])
def test_a_secret_made_by_an_edit_from_characters_already_there_is_new(before: str,
                                                                       after: str) -> None:
    assert scan(before) == []
    assert len(introduced(before, after)) == 1


def test_a_secret_uncovered_by_a_second_edit_is_refused_through_the_pipeline(
        workspace: Path, open_session: Callable[..., Session]) -> None:
    session = open_session()
    path = workspace / "config.py"
    assert not call(session, "Write", file_path=str(path), content=f"T = 'X{_TOKEN}'\n").is_error
    result = call(session, "Edit", file_path=str(path), old_string="'X", new_string="'")
    assert result.is_error and "a GitHub token (line 1)" in result.text
    assert path.read_text() == f"T = 'X{_TOKEN}'\n"


def test_many_secrets_moved_within_a_file_are_not_news() -> None:
    ids = _ids(40)
    before = "\n".join(ids) + "\n"
    assert introduced(before, "\n".join(reversed(ids)) + "\n") == []
    assert [f.kind for f in introduced(before, before + f"X{_TOKEN}\n{_TOKEN}\n")] == [
        "a GitHub token"]


def _literal_forms(key: str) -> dict[str, str]:
    lines = key.strip("\n").split("\n")
    return {
        "python adjacent literals": "KEY = (\n" + "".join(f'    "{x}\\n"\n' for x in lines) + ")\n",
        "python bytes literals": "KEY = (\n" + "".join(f"    b'{x}\\n'\n" for x in lines) + ")\n",
        "backslash continuations": 'KEY = "' + "\\n\\\n".join(lines) + '\\n"\n',
        "javascript concatenation": "const KEY = " + " +\n  ".join(f"'{x}\\n'" for x in lines)
                                    + ";\n",
        "go concatenation on one line": "var key = " + "+".join(f'"{x}\\n"' for x in lines) + "\n",
        "a JSON array of lines": json.dumps({"key": [x + "\n" for x in lines]}, indent=1),
        "a notebook's JSON": json.dumps({"cells": [{"cell_type": "code", "metadata": {},
                                                    "source": [x + "\n" for x in lines]}],
                                         "metadata": {}, "nbformat": 4, "nbformat_minor": 5}),
    }


@pytest.mark.parametrize("form", list(_literal_forms("a\nb")))
@pytest.mark.parametrize(("name", "kind"), [("ed25519", "an OpenSSH private key"),
                                            ("rsa", "a PEM private key"),
                                            ("encrypted", "a PEM private key")])
def test_a_key_written_as_string_literals_in_code_is_found(keys: dict[str, str], form: str,
                                                            name: str, kind: str) -> None:
    assert [f.kind for f in scan(_literal_forms(keys[name])[form])] == [kind]


@pytest.mark.parametrize("name", ["public", "certificate"])
def test_a_public_key_or_certificate_in_string_literals_is_not_a_secret(
        keys: dict[str, str], name: str) -> None:
    assert all(scan(text) == [] for text in _literal_forms(keys[name]).values())


@pytest.mark.parametrize("wrap", [0, 76])
def test_a_base64_encoded_private_key_is_found(keys: dict[str, str], wrap: int) -> None:
    blob = base64.b64encode(keys["rsa"].encode()).decode()
    if wrap:
        blob = "\n    ".join(blob[i:i + wrap] for i in range(0, len(blob), wrap))
    manifest = f"kind: Secret\ndata:\n  tls.key: |\n    {blob}\n  tls.crt: x\n"
    assert [(f.kind, f.line) for f in scan(manifest)] == [("a base64-encoded private key", 4)]


@pytest.mark.parametrize("name", ["public", "certificate"])
def test_a_base64_encoded_certificate_or_public_key_is_not_a_secret(keys: dict[str, str],
                                                                    name: str) -> None:
    assert scan(f"tls.crt: {base64.b64encode(keys[name].encode()).decode()}\n") == []


@pytest.mark.parametrize(("what", "make"), [
    ("100,000 AWS key ids, each a finding", lambda: "\n".join(_ids(100_000)) + "\n"),
    ("BEGIN lines that never end", lambda: "-----BEGIN PRIVATE KEY-----\n" * 200_000),
    ("a service account key that never ends",
     lambda: ('"private_key": "-----BEGIN PRIVATE KEY-----' + "A" * 60) * 40_000),
    ("PuTTY headers on one line", lambda: "PuTTY-User-Key-File-2: " * 50_000),
    ("base64 keys that never decode", lambda: ("LS0tLS1CRUdJT" + "A" * 200 + " ") * 20_000),
])
def test_scanning_hostile_text_takes_time_in_proportion_to_it(what: str,
                                                              make: Callable[[], str]) -> None:
    text = make()
    # CPU time of this process: the bound is on the scanner's work, which
    # other processes on the machine do not change
    started = time.process_time()
    scan(text)
    assert time.process_time() - started < 5, what


def test_many_secrets_moved_in_a_large_file_are_judged_in_proportion_to_it() -> None:
    ids, filler = _ids(50_000), "x = 1\n" * 200_000
    before = filler + "\n".join(ids) + "\n" + filler
    started = time.process_time()
    assert introduced(before, filler + "\n".join(reversed(ids)) + "\n" + filler) == []
    assert time.process_time() - started < 15
