"""Checks on ``out=``: refuse an array that cannot take the result as it is,
before anything is written to it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def check(
    out: Any,
    shape: tuple[int, ...],
    dtype: Any,
    strides: tuple[int, ...] | None,
    backend: Any,
) -> None:
    """Refuse an ``out`` of the wrong shape or dtype, or one whose elements
    share memory (``strides``: its strides in elements, as its library
    gives them; None where no two elements can alias: contiguous, or a
    library that copies on write). ``backend``'s `_check_unnested` is asked
    first of a layout whose strides do not nest."""
    if tuple(out.shape) != shape:
        msg = f"out has shape {tuple(out.shape)}; the result needs {shape}"
        raise ValueError(msg)
    if out.dtype != dtype:
        msg = f"out has dtype {out.dtype}; the result needs {dtype}"
        raise TypeError(msg)
    if strides is None or nests(shape, strides):
        return
    backend._check_unnested(shape, strides)
    # Told exactly from every element's offset, where there are few enough
    # to list (and their number is known before the program runs).
    n = math.prod(shape)
    if type(n) is not int or n > _ENUMERATED:
        msg = (
            f"out's layout (strides {strides} for shape {shape}) is not one "
            f"eyelike can check for elements that share memory (more than "
            f"{_ENUMERATED} elements, with strides that do not nest); pass "
            f"an out whose strides nest, as any transpose or slice of a "
            f"contiguous array's do, or copy the result into it"
        )
        raise ValueError(msg)
    offsets = np.zeros((), dtype=np.int64)
    for size, stride in zip(shape, strides, strict=True):
        offsets = np.add.outer(offsets, np.arange(size, dtype=np.int64) * stride)
    if np.unique(offsets).size < n:
        msg = (
            f"out has elements that share memory (strides {strides} for shape "
            f"{shape}); it cannot hold an eye"
        )
        raise ValueError(msg)


# Layouts whose strides do not nest are checked element by element up to
# this many elements (their offsets: 8 bytes each).
_ENUMERATED = 1 << 20


def nests(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether the strides, in increasing order, each step past everything
    the smaller ones reach: then no two elements share memory (the layout of
    any transpose or slice of a contiguous array). Others may or may not."""
    if math.prod(shape) <= 1:
        return True
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
            return False
        extent += stride * (size - 1)
    return True
