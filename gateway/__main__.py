"""``python -m gateway`` is the ``shellgate`` command."""

import os
import sys


# `python -m` puts the working directory first on sys.path, and the working
# directory is the workspace, where sandboxed commands write. Every module
# imported after the first command ran (they are imported when first used,
# to start fast) would be looked for there first. From a review: a command
# wrote `psutil.py` into the workspace, and the host imported and ran it at
# its first process count. The console script has its own directory there
# instead; here the entry is removed, as `python -P` would.
def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # removed: nothing can be imported from it either
        return None


if not sys.flags.safe_path and sys.path and sys.path[0] in ("", _cwd()):
    del sys.path[0]

from .cli import main  # noqa: E402 -- after the sys.path fix above

sys.exit(main())
