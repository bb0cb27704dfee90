"""Checks on ``out=``: refuse an array that cannot take the result as it is,
before anything is written to it. (`Backend.check_output` runs them, with
the library's own rules between.)"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["check_match", "check_overlap"]


def check_match(out: Any, shape: tuple[int, ...], dtype: Any) -> None:
    """Refuse an ``out`` of the wrong shape or dtype."""
    if tuple(out.shape) != shape:
        msg = f"out has shape {tuple(out.shape)}; the result needs {shape}"
        raise ValueError(msg)
    if out.dtype != dtype:
        msg = f"out has dtype {out.dtype}; the result needs {dtype}"
        raise TypeError(msg)


def check_overlap(shape: tuple[int, ...], strides: tuple[int, ...] | None) -> None:
    """Refuse an ``out`` whose elements share memory (``strides`` in
    elements; None: the library copies on write, so nothing aliases)."""
    if _overlaps_itself(shape, strides):
        msg = (
            f"out has elements that share memory (strides {strides} for shape "
            f"{shape}); it cannot hold an eye"
        )
        raise ValueError(msg)


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
