"""How error messages show a caller's value: its repr, cut short; and the
one message for a device that a GPU library cannot use on this machine.

A plain ``repr`` of a list nested thousands of levels deep raises
``RecursionError`` (while building the message meant to explain it), and a
caller's own ``__repr__`` may raise anything: neither may replace the
message. Nested containers are shown a few levels deep.
"""

from __future__ import annotations

import reprlib
from typing import Any

__all__ = ["no_usable_device", "show"]

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


def no_usable_device(library: str, kind: str, device: Any = None) -> str:
    """The message for a ``device`` (None: the library's default) that
    ``library`` cannot use, having no usable device of ``kind`` (``"CUDA"``)
    here: no device, no driver, or a build without it.

    Written once: the API raises it as a ``ValueError``, and the command
    line prints the same words.
    """
    asked = "its default device" if device is None else f"device={show(device)}"
    return f"{library} cannot use {asked}: no usable {kind} device on this machine"
