"""How error messages show a caller's value: its repr, cut short (a plain
``repr`` of a list nested thousands of levels deep raises
``RecursionError``, and a caller's own ``__repr__`` may raise anything;
neither may replace the message)."""

from __future__ import annotations

import reprlib
from typing import Any

_REPR = reprlib.Repr()
_REPR.maxlevel = 6
# Entries are cut by the width below, not by count: a long k is shown from
# its start, as a plain repr would be.
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 100
_REPR.maxfrozenset = _REPR.maxdeque = _REPR.maxarray = 100
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 10_000


def show(value: Any, width: int = 80) -> str:
    """``repr(value)``, at most ``width`` characters, for an error message."""
    try:
        text = _REPR.repr(value)
    except Exception:  # a hostile __repr__, or an object nested too deeply
        text = f"<{type(value).__name__} object>"
    return text[:width]


def show_typed(value: Any) -> str:
    """`show` after the name of the value's type: ``"float 1.5"``."""
    return f"{type(value).__name__} {show(value)}"


def no_usable_device(library: str, kind: str, device: Any) -> str:
    """The message for a ``device`` (None: the library's default) that
    ``library`` cannot use, having no usable device of ``kind`` (``"CUDA"``)
    here; the API raises it, the command line prints it."""
    asked = "its default device" if device is None else f"device={show(device)}"
    return f"{library} cannot use {asked}: no usable {kind} device on this machine"


def past_count(device: Any, count: int, first: str, last: str) -> str:
    """The message for a ``device`` past this machine's ``count`` CUDA
    devices, which the library names ``first`` to ``last``."""
    many = f"{count} CUDA device{'s' if count > 1 else ''}"
    return f"device={show(device)}: this machine has {many} ({first} to {last})"
