"""``python -m ctxbudget.cli``: the same as the ``ctxbudget`` command."""

import sys

from .app import main

sys.exit(main())
