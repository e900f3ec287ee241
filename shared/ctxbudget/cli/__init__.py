"""The ``ctxbudget`` command line: inspect and compact transcripts, and the demo.

Each name is imported on first use (PEP 562), so importing the package costs next to nothing; :func:`main` answers
``ctxbudget --version`` without importing the commands.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..messages._lazy import lazy_face

if TYPE_CHECKING:
    from .app import (
        EXIT_FAILURE,
        EXIT_OK,
        EXIT_USAGE,
        build_parser,
    )

__all__ = [
    "EXIT_FAILURE",
    "EXIT_OK",
    "EXIT_USAGE",
    "build_parser",
    "main",
]

_LAZY: dict[str, str] = {
    "EXIT_FAILURE": "app",
    "EXIT_OK": "app",
    "EXIT_USAGE": "app",
    "build_parser": "app",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ctxbudget`` command with ``argv`` (default ``sys.argv[1:]``); return the exit code.

    ``--version`` alone is answered here, without importing the commands (what they import costs half a second);
    everything else is :func:`ctxbudget.cli.app.main`.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"]:
        from .. import __version__  # noqa: PLC0415 - the face only, not the commands

        print(f"ctxbudget {__version__}")
        return 0
    from .app import main as run  # noqa: PLC0415 - the commands, imported only to run one

    return run(argv)


__getattr__, __dir__ = lazy_face(__name__, _LAZY)
