"""``python -m gateway`` is the ``shellgate`` command."""

import sys

from .cli import main

sys.exit(main())
