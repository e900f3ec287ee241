"""The ``ctxbudget`` command line: inspect and compact transcripts, and the demo.

Each name is imported on first use (PEP 562), so importing the package costs next to nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import (
        EXIT_FAILURE,
        EXIT_OK,
        EXIT_USAGE,
        build_parser,
        main,
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
    "main": "app",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
