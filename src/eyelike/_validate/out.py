"""Checks on ``out=``: refuse an array that cannot take the result as it is,
before anything is written to it."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .text import show

if TYPE_CHECKING:
    from .._backends._base import Backend

__all__ = ["check_out"]


def _overlaps_itself(shape: tuple[int, ...], strides: tuple[int, ...] | None) -> bool:
    """Whether two elements may share memory (conservative: a layout that is
    not a permutation of nested, non-overlapping strides counts as overlap)."""
    if strides is None or math.prod(shape) <= 1:
        return False
    extent = 1
    for size, stride in sorted(
        ((n, abs(st)) for n, st in zip(shape, strides, strict=True) if n > 1),
        key=lambda pair: pair[1],
    ):
        if stride < extent:
            return True
        extent = stride * (size - 1) + extent
    return False


def check_out(
    out: Any, backend: Backend, shape: tuple[int, ...], dtype: Any, device: Any
) -> None:
    """Refuse an ``out`` of the wrong shape, dtype or device, read-only, or
    whose elements share memory (``backend`` is ``out``'s own)."""
    if not backend.mutable:
        msg = f"out: {backend.name} arrays are immutable and cannot be filled in place"
        raise TypeError(msg)
    if tuple(out.shape) != shape:
        msg = f"out has shape {tuple(out.shape)}; the result needs {shape}"
        raise ValueError(msg)
    if out.dtype != dtype:
        msg = f"out has dtype {out.dtype}; the result needs {dtype}"
        raise TypeError(msg)
    backend.check_writeable(out)
    strides = backend.strides(out)
    if _overlaps_itself(tuple(out.shape), strides):
        msg = (
            f"out has elements that share memory (strides {strides} for shape "
            f"{tuple(out.shape)}); it cannot hold an eye"
        )
        raise ValueError(msg)
    if device is None:
        return
    have = backend.device_of(out)
    if not backend.same_device(have, device):
        msg = f"out is on device {have}; device {show(device)} was asked for"
        raise ValueError(msg)
