"""Checks on ``out=``: refuse an array that cannot take the result as it is,
before anything is written to it (after its library's own refusals, which
give its strides)."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["check"]


def check(
    out: Any, shape: tuple[int, ...], dtype: Any, strides: tuple[int, ...] | None
) -> None:
    """Refuse an ``out`` of the wrong shape or dtype, or one whose elements
    share memory (``strides``: its strides in elements, as its library
    gives them; None where no two elements can alias: contiguous, or a
    library that copies on write)."""
    if tuple(out.shape) != shape:
        msg = f"out has shape {tuple(out.shape)}; the result needs {shape}"
        raise ValueError(msg)
    if out.dtype != dtype:
        msg = f"out has dtype {out.dtype}; the result needs {dtype}"
        raise TypeError(msg)
    if strides is not None and _overlaps_itself(shape, strides):
        msg = (
            f"out has elements that share memory (strides {strides} for shape "
            f"{shape}); it cannot hold an eye"
        )
        raise ValueError(msg)


def _overlaps_itself(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether two elements may share memory (conservative: a layout that is
    not a permutation of nested, non-overlapping strides counts as overlap)."""
    if math.prod(shape) <= 1:
        return False
    # By stride; equal strides of two dimensions overlap in either order.
    # (An insertion sort of comparisons: torch.compile cannot ``sorted``
    # strides that are symbolic, but it can compare them.)
    ordered: list[tuple[int, int]] = []
    for size, stride in zip(shape, strides, strict=True):
        if size > 1:
            where = len(ordered)
            while where and ordered[where - 1][0] > abs(stride):
                where -= 1
            ordered.insert(where, (abs(stride), size))
    extent = 1
    for stride, size in ordered:
        if stride < extent:
            return True
        extent += stride * (size - 1)
    return False
