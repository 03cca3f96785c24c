"""Redaction and bounding: what reaches the log of a call's strings."""

from __future__ import annotations

import enum
import hashlib
from pathlib import Path

import pytest

from gateway.audit import MASK, MAX_CHARS, is_secret_name, redact_text, scrub

GH = "ghp_" + "A1b2C3d4" * 5
JWT = ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nq8W+secretbody\n"
       "-----END RSA PRIVATE KEY-----")

#: (text, the secret that must be gone, what must remain)
SECRETS = [
    ("git clone https://alice:hunter2@example.com/r.git", "hunter2",
     "https://alice:***@example.com/r.git"),
    ("redis-cli -u redis://:p4ss@db:6379", "p4ss", "redis://:***@db:6379"),
    ("curl -H 'Authorization: Bearer abc.def-123' https://api", "abc.def-123",
     "Authorization: Bearer ***"),
    ('curl -H "Authorization: Basic dXNlcjpwYXNz" x', "dXNlcjpwYXNz", "Authorization: Basic ***"),
    ("curl -H 'X-Api-Key: k-9f8e7d' x", "k-9f8e7d", "X-Api-Key: ***"),
    ("curl -H 'Cookie: session=abc; csrf=def' x", "csrf=def", "Cookie: ***"),
    ("mysql --password=s3cr3t -u bob", "s3cr3t", "--password=***"),
    ("gh auth --token tkn123 x", "tkn123", "--token ***"),
    ("tool --api-key 'k y' --client-secret=zz9", "zz9", "--api-key '***'"),
    ("deploy -password hunter2", "hunter2", "-password ***"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG aws s3 ls", "wJalrXUtnFEMI",
     "AWS_SECRET_ACCESS_KEY=*** aws s3 ls"),
    ("GITHUB_TOKEN=abc123 git push", "abc123", "GITHUB_TOKEN=*** git push"),
    ("export DB_PASSWORD='pa ss'", "pa ss", "DB_PASSWORD='***'"),
    ("PGPASSWORD=pg1 psql", "pg1", "PGPASSWORD=***"),
    ("MYSQL_PWD=my1 mysql", "my1", "MYSQL_PWD=***"),
    ('{"password": "hunter2", "user": "bob"}', "hunter2", '"password": "***", "user": "bob"'),
    ("{'api_key': 'zz'}", "zz'", "'api_key': '***'"),
    ("db:\n  password: yaml-secret\n", "yaml-secret", "password: ***"),
    ("https://api.example.com/v1?api_key=q1w2&x=1", "q1w2", "api_key=***&x=1"),
    ('git commit -m "note --password=abc"', "abc", "--password=***"),
    ("key sk-ant-api03-Abc123Def456Ghi789Jkl", "Abc123Def456", "sk-ant-***"),
    ("OPENAI=sk-proj-abcdefghij0123456789abcdefghij0123", "abcdefghij0123", "sk-proj-***"),
    (f"git push https://x@github.com {GH}", GH[4:], "ghp_***"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "11ABCDEFG", "github_pat_***"),
    ("remote glpat-AbCdEf0123456789xyzW", "AbCdEf0123456789", "glpat-***"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc", "sk_live_***"),
    ("//registry/:_authToken=npm_" + "a1" * 18, "a1a1a1a1", "_authToken=***"),
    ("HF hf_" + "Ab3" * 12, "Ab3Ab3Ab3", "hf_***"),
    ("id AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE", "AKIA***"),
    ("slack xoxb-123456789012-abcdefABCDEF", "123456789012", "xoxb-***"),
    ("maps AIzaSyA1234567890abcdefghijklmnopqrstuv", "SyA1234567890", "AIza***"),
    (f"token {JWT} end", JWT[3:], "eyJ*** end"),
    (f"cat > id_rsa <<EOF\n{PEM}\nEOF", "secretbody",
     "-----BEGIN RSA PRIVATE KEY-----***-----END RSA PRIVATE KEY-----\nEOF"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk cut short", "b3BlbnNzaC1rZXk",
     "-----BEGIN OPENSSH PRIVATE KEY-----***"),
    # from the third review: programs' own ways of taking a secret
    ("mysql -u root -pS3cr3tPass appdb", "S3cr3tPass", "-p*** appdb"),
    ("curl -u admin:hunter2 https://x", "hunter2", "-u admin:***"),
    ("curl --user u:p4ss x", "p4ss", "--user u:***"),
    ("export SECRET_KEY_BASE=abcdef12", "abcdef12", "SECRET_KEY_BASE=***"),
    ("git push https://0123456789abcdefTOKEN@host/x", "0123456789abcdefTOKEN", "https://***@host"),
    ("sshpass -p hunter2 ssh h", "hunter2", "sshpass -p ***"),
    ("docker login -u me -p hunter2 reg", "hunter2", "-p *** reg"),
    ("redis-cli -a hunter2 ping", "hunter2", "-a *** ping"),
    ("ssh-keygen -N hunter2 -f k", "hunter2", "-N *** -f k"),
    ("openssl enc -k hunter2", "hunter2", "-k ***"),
    ("aws configure set aws_secret_access_key VALUE9", "VALUE9", "aws_secret_access_key ***"),
    ("CREATE USER x IDENTIFIED BY 'hunter2';", "hunter2", "IDENTIFIED BY '***'"),
    ("machine h login me password hunter2", "hunter2", "password ***"),
    # from the fourth review, and the table of programs' password options
    ("htpasswd -b .htpasswd alice Hunter2x", "Hunter2x", "alice ***"),
    ("htpasswd -nb alice Hunter2x", "Hunter2x", "-nb alice ***"),
    ("htpasswd -c -b f alice Hunter2x", "Hunter2x", "f alice ***"),
    ("keytool -list -keystore k.jks -storepass Hunter2x", "Hunter2x", "-storepass ***"),
    ("jarsigner -keypass Hunter2x app.jar k", "Hunter2x", "-keypass *** app.jar"),
    ("ldapsearch -x -D cn=admin -w Hunter2x -b dc=x", "Hunter2x", "-w *** -b dc=x"),
    ("ldappasswd -s Hunter2x uid=a", "Hunter2x", "-s *** uid=a"),
    ("smbclient //srv/share -U alice%Hunter2x", "Hunter2x", "-U alice%***"),
    ("rpcclient -U 'alice%Hunter2x' srv", "Hunter2x", "-U 'alice%***"),
    ("curl https://Hunter2x@api.example.com/", "Hunter2x", "https://***@api.example.com"),
    ("mongosh --host h -u a -p Hunter2x", "Hunter2x", "-p ***"),
    ("sqlcmd -S h -U sa -P Hunter2x", "Hunter2x", "-P ***"),
    ("ipmitool -H h -U a -P Hunter2x power status", "Hunter2x", "-P *** power"),
    ("zip -P Hunter2x out.zip f", "Hunter2x", "-P *** out.zip"),
    ("7z a -pHunter2x x.7z f", "Hunter2x", "-p*** x.7z"),
    ("xfreerdp /v:h /u:a /p:Hunter2x", "Hunter2x", "/p:***"),
    ("lftp -u alice,Hunter2x ftp://h", "Hunter2x", "-u alice,***"),
    ("snmpwalk -v3 -A Hunter2x -X Hunter2x h", "Hunter2x", "-A *** -X *** h"),
    ("podman login -u me -p Hunter2x quay.io", "Hunter2x", "-p *** quay.io"),
]


@pytest.mark.parametrize(("text", "secret", "kept"), SECRETS)
def test_a_secret_is_masked_and_the_shape_around_it_kept(text: str, secret: str,
                                                          kept: str) -> None:
    out = redact_text(text)
    assert secret not in out
    assert kept in out


@pytest.mark.parametrize(("text", "secret", "kept"), SECRETS)
def test_redaction_is_idempotent(text: str, secret: str, kept: str) -> None:
    assert redact_text(redact_text(text)) == redact_text(text)


@pytest.mark.parametrize("text", [
    "python train.py --tokenizer=bpe",
    "KEYBOARD=us setxkbmap",
    "git log --author=alice",
    "git log --author alice --oneline",
    "curl https://example.com:8080/path?q=1",
    "git clone git@github.com:org/repo.git",
    "llm --max-tokens 100",
    "SSH_AUTH_SOCK=/tmp/agent.sock ssh host",
    "PWD=/home/u OLDPWD=/tmp ls",
    "docker login --password-stdin registry.example.com",
    "gh auth login --with-token < token.txt",
    "TOKENIZERS_PARALLELISM=false python x.py",
    "curl --key client.pem https://x",
    "ssh -p 2222 host",
    "git checkout task-abcdefghijklmnopqrstuvwxyzabcdefgh",
    "sort --key=2 file",
    "grep -r token_count src/",
    "echo skip-this-step",
    "mkdir -p a/b",
    "sort -u file",
    "mysql -u root -p appdb",
    "curl -u alice https://x",
    "docker run -p 8080:80 nginx",
    "git log -p",
    "ssh://git@github.com/org/repo.git",
    "htpasswd -v .htpasswd alice",
])
def test_an_ordinary_command_is_left_alone(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(("name", "secret"), [
    ("password", True), ("PGPASSWORD", True), ("client_secret", True), ("apiKey", True),
    ("X-Api-Key", True), ("AWS_SECRET_ACCESS_KEY", True), ("STRIPE_KEY", True),
    ("Authorization", True), ("auth", True), ("access_token", True), ("Set-Cookie", True),
    ("tokenizer", False), ("KEYBOARD", False), ("author", False), ("max_tokens", False),
    ("token_count", False), ("SSH_AUTH_SOCK", False), ("PWD", False), ("key", False),
    ("sort_key", False), ("password_file", False), ("secret_name", False),
])
def test_a_name_is_judged_by_its_last_word(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_a_value_under_a_secret_key_is_masked_whole_at_any_depth() -> None:
    out = scrub({"tool": "WebFetch", "headers": {"Authorization": "whatever it is",
                                                 "Accept": "text/html"},
                 "auth": ["alice", "pw"], "apiKey": "plain", "max_tokens": 100,
                 "password": ""})
    assert out == {"tool": "WebFetch", "headers": {"Authorization": MASK, "Accept": "text/html"},
                   "auth": [MASK, MASK], "apiKey": MASK, "max_tokens": 100, "password": ""}


def test_a_large_value_is_cut_and_its_hash_kept() -> None:
    content = "line of a file\n" * 1000
    out = scrub({"content": content})["content"]
    assert out == {"cut": True, "length": len(content),
                   "sha256": hashlib.sha256(content.encode()).hexdigest(),
                   "head": content[:MAX_CHARS]}


def test_a_short_value_is_never_hashed() -> None:
    assert scrub({"content": "x" * MAX_CHARS}) == {"content": "x" * MAX_CHARS}


def test_the_head_of_a_cut_value_is_redacted_before_the_cut() -> None:
    content = "a" * (MAX_CHARS - 10) + " " + GH + " " + "b" * MAX_CHARS
    head = scrub(content)["head"]
    assert len(head) == MAX_CHARS
    assert GH[4:12] not in head and "ghp_***" in head


def test_a_private_key_longer_than_the_bound_is_not_kept_in_part() -> None:
    body = "Q" * (3 * MAX_CHARS)
    content = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\ntail"
    out = scrub(content)
    assert "QQQQ" not in out["head"] and out["length"] == len(content)


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    DENY = 2


@pytest.mark.parametrize(("value", "expected"), [
    (Level.DENY, "deny"),
    (Colour.RED, "red"),
    ((1, "a"), [1, "a"]),
    (frozenset({"b", "a"}), ["a", "b"]),
    (float("nan"), "nan"),
    (Path("/tmp/x"), "/tmp/x"),
    (b"bytes\xff", "bytes\ufffd"),
    ("lone \ud800 surrogate", "lone \\ud800 surrogate"),
    (object, str(object)),
])
def test_any_value_becomes_json_able(value: object, expected: object) -> None:
    assert scrub(value) == expected


def test_nesting_past_the_bound_is_replaced_by_a_marker() -> None:
    deep: list[object] = []
    node = deep
    for _ in range(100):
        child: list[object] = []
        node.append(child)
        node = child
    text = repr(scrub(deep))
    assert "[nested too deeply]" in text


def test_a_value_or_a_dataclass_is_logged_as_its_fields_with_secrets_masked() -> None:
    """From a review: after the move to value classes, a standard dataclass
    fell through to its repr, and a password inside it was logged."""
    import dataclasses

    from values import valueclass

    @dataclasses.dataclass
    class Theirs:
        name: str
        password: str
        auth: dict[str, str]

    @valueclass
    class Ours:
        name: str
        password: str

    assert scrub(Theirs("x", "correct horse", {"bearer": "abc123"})) == {
        "name": "x", "password": MASK, "auth": {"bearer": MASK}}
    assert scrub(Ours("x", "correct horse")) == {"name": "x", "password": MASK}
