"""The layer packages' faces: each public name imported from its module on first use (PEP 562).

A face lists its names once (``__all__`` for users, a name -> module mapping for this loader, and the same names
under ``TYPE_CHECKING`` for static analysis); importing the package itself imports none of its modules.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_face"]


def lazy_face(package: str, modules: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the face of ``package``.

    Args:
        package: the package's ``__name__``.
        modules: each public name and the module (relative to the package) it is imported from.
    """

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)  # later lookups find it without calling __getattr__
        return value

    def __dir__() -> list[str]:
        namespace = sys.modules[package]
        return sorted({*vars(namespace), *getattr(namespace, "__all__", ())})

    return __getattr__, __dir__
