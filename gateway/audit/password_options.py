"""Programs that take a password as an argument, and how: the table the
redactor masks command lines by.

From a review: `htpasswd -b`, `keytool -storepass`, `ldapsearch -w`,
`smbclient -U user%pass` and others were logged with the password in
clear. A program's way of taking a secret is a fact of that program, so it
is kept here as data, one row a program family, and the patterns are made
from it (``redact._PROGRAM_SECRETS``).

Forms:

- ``attached``: the value only sticks to the option (``mysql -pS3cr3t``;
  `mysql -p S3cr3t` prompts and takes S3cr3t for a database)
- ``next``: the next word (``keytool -storepass S3cr3t``)
- ``either``: stuck or the next word (``sshpass -pX``, ``sshpass -p X``)
- ``user<SEP>``: a user name, SEP, then the password (``-U user%pass``)
- ``prefix``: the value follows the option's text directly (``/p:pass``)
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = ["PASSWORD_OPTIONS", "POSITIONAL_PASSWORDS"]

_MYSQL = ("mysql", "mariadb", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow",
          "mysqlcheck", "mysqlbinlog", "mysqlpump", "mariadb-dump", "mariadb-admin")
_LDAP = ("ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapwhoami", "ldappasswd",
         "ldapcompare", "ldapmodrdn", "ldapexop", "ldapurl")
_SAMBA = ("smbclient", "rpcclient", "smbcacls", "smbget", "smbtree", "net", "smbcquotas")
_MONGO = ("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport",
          "mongostat", "mongotop", "mongofiles")
_JAVA_KEYS = ("keytool", "jarsigner")
_SNMP = ("snmpget", "snmpwalk", "snmpset", "snmpbulkwalk", "snmpgetnext", "snmptrap",
         "snmptable")

#: (program names, ((option, form), ...))
PASSWORD_OPTIONS: Final[tuple[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], ...]] = (
    (_MYSQL, (("-p", "attached"),)),
    (("sshpass",), (("-p", "either"),)),
    (("redis-cli", "keydb-cli"), (("-a", "either"),)),
    (("login",), (("-p", "next"),)),
    (("ssh-keygen",), (("-N", "either"), ("-P", "either"))),
    (("openssl",), (("-k", "next"),)),
    (_JAVA_KEYS, (("-storepass", "next"), ("-keypass", "next"), ("-srcstorepass", "next"),
                  ("-deststorepass", "next"), ("-srckeypass", "next"),
                  ("-destkeypass", "next"), ("-new", "next"))),
    (_LDAP, (("-w", "either"), ("-s", "either"), ("-a", "either"))),
    (_SAMBA, (("-U", "user%"), ("--user", "user%"))),
    (_MONGO, (("-p", "next"),)),
    (("sqlcmd", "bcp", "ipmitool", "osql"), (("-P", "either"),)),
    # (only their `login`: `docker run -p 8080:80` publishes a port)
    (("docker login", "podman login", "nerdctl login", "buildah login", "skopeo login"),
     (("-p", "next"),)),
    (("zip", "unzip", "zipcloak"), (("-P", "next"),)),
    (("7z", "7za", "7zr", "rar", "unrar"), (("-p", "attached"),)),
    (("lftp",), (("-u", "user,"),)),
    (("xfreerdp", "wlfreerdp", "sdl-freerdp"), (("/p:", "prefix"),)),
    (_SNMP, (("-A", "either"), ("-X", "either"))),
    (("vncviewer", "x11vnc"), (("-passwd", "next"),)),
)

#: programs that take the password as a positional word when an option
#: says so: (program, option letter, positional words before it)
#: — `htpasswd -b FILE USER PASSWORD`, `htpasswd -nb USER PASSWORD`
POSITIONAL_PASSWORDS: Final[tuple[tuple[str, str, int], ...]] = (
    ("htpasswd", "b", 2),
)
