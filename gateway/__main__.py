"""``python -m gateway`` is the ``shellgate`` command. The working
directory was taken off ``sys.path`` when this package was imported
(``gateway/__init__.py`` says why)."""

import sys

from .cli import main

sys.exit(main())
