"""``shellgate trust [DIR]``: let a workspace run its repository's own
hooks (``--remove`` takes it back, ``--list`` shows what is trusted)."""

from __future__ import annotations

import argparse
import os

from ..errors import UsageError
from ..hooks import TrustError, trust, trust_file, trusted_dirs


def main(args: argparse.Namespace) -> int:
    if args.list:
        if args.dir is not None or args.remove:
            raise UsageError("--list takes no DIR and no --remove")
        for directory in trusted_dirs():
            print(directory)
        return 0
    directory = os.path.realpath(args.dir or os.getcwd())
    try:
        changed = trust(directory, remove=args.remove)
    except TrustError as exc:
        raise UsageError(str(exc)) from None
    if args.remove:
        print(f"{directory}: {'no longer trusted' if changed else 'was not trusted'}")
    else:
        print(f"{directory}: {'trusted' if changed else 'already trusted'} — its "
              f"repository's hooks will run (recorded in {trust_file()})")
    return 0
