"""Stand-in classes named like the real ones, so the stdlib Pickler writes the real globals.

``pickle`` names a class by ``__module__`` and ``__qualname__`` and checks that importing that
module gives the same object back; registering stand-in modules in ``sys.modules`` while a
sample is written is enough (no torch, sklearn, transformers or accelerate installed). Nothing
written with them is ever read back by anything but hfvet's scanners and the peers.
"""

from __future__ import annotations

import contextlib
import enum
import sys
import types
from collections.abc import Iterator, Mapping
from typing import Any


def stand_in(module: str, qualname: str, bases: tuple[type, ...] = (), **body: Any) -> type:
    """A plain class that pickles as ``module.qualname`` (NEWOBJ + BUILD of its __dict__)."""
    cls = type(qualname, bases, dict(body))
    cls.__module__, cls.__qualname__ = module, qualname
    return cls


def stand_in_enum(module: str, qualname: str, values: Mapping[str, str]) -> type[enum.Enum]:
    """A str-valued Enum (transformers' ExplicitEnum); pickles as REDUCE ``cls(value)``."""
    cls = enum.Enum(qualname, dict(values), type=str, module=module, qualname=qualname)  # type: ignore[misc]
    return cls


def instance(cls: type, **state: Any) -> Any:
    obj = cls.__new__(cls)
    obj.__dict__.update(state)
    return obj


@contextlib.contextmanager
def modules(*classes: Any) -> Iterator[None]:
    """Register ``classes`` (and their parent packages) under their module names while writing."""
    wanted: dict[str, types.ModuleType] = {}
    for obj in classes:
        name = obj.__module__
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            wanted.setdefault(".".join(parts[:i]), types.ModuleType(".".join(parts[:i])))
        setattr(wanted[name], obj.__qualname__, obj)
    saved = {name: sys.modules.get(name) for name in wanted}
    sys.modules.update(wanted)
    try:
        yield
    finally:
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous


class Device:
    """torch.device: ``__reduce__`` is ``(torch.device, (type, index))`` or ``(type,)``."""

    def __init__(self, kind: str, index: int | None = None) -> None:
        self.kind, self.index = kind, index

    def __reduce__(self) -> tuple[Any, ...]:
        return (Device, (self.kind,) if self.index is None else (self.kind, self.index))


Device.__module__, Device.__qualname__ = "torch", "device"
