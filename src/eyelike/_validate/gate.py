"""The one gate for the short paths: which calls may skip the general path.

`eye` and `eye_like` offer a call (one with no ``chunks`` or ``order``) to
its backend's short path, `Backend.short_eye`, which builds it at once from
the caller's own arguments instead of through the pipeline's steps. A short
path never raises an error of its own: it builds only where no rule of the
general path could refuse the call, and builds exactly what that path
would. Half of that question is the same for every library, and is
answered here, once, by `admit`, which a short path runs before any rule of
its own (a library without one pays nothing for it). It lets a call
through where:

1. **Shape.** ``(*batch_shape, n_rows, n_cols)`` (`eye`) or ``x``'s shape
   (`eye_like`) is plain Python ints (no ``__index__`` object, no bool, no
   size known only when the program runs), each at least 1, at most
   `MAX_DIMS` of them: NumPy's 64, the one rank limit.
2. **Size.** The output fits this machine's memory at `BYTES_PER_ELEMENT`
   bytes an element: the widest item of any dtype (complex128, 16 bytes)
   plus the most scratch a build holds beside it for a per-matrix ``k``
   (at most 16 bytes an element; `Backend._scratch`). So no size check of
   the general path can fail, in any dtype, and no backend checks size
   again.
3. **k.** One Python int, which the gate clamps into ``[-n_rows, n_cols]``:
   the ``k`` every build gets (`Build.k`), whatever the caller's integer.
   Or, with at least one batch dimension, anything else, handed on as
   given: a backend whose short path builds one offset per matrix takes it
   only as an array of its own library, of a signed integer type (a rule of
   that library), whose shape `admit_offsets` admits (rank at least 1,
   broadcasting to the batch).

Under torch.compile the gate is traced into the caller's program, where
each comparison of a size or of ``k`` known only when the program runs is
a guard, checked on every call and failed by the next value (a changing
``k``, a growing batch: one more compile each). So while Dynamo traces,
torch's short path runs `admit_traced`, which gives the same answers with
no such comparison:
``k`` clamped by ``min`` and ``max`` (symbolic expressions, no guard), the
memory by one comparison (a guard only an output beyond memory fails).
Eagerly, `admit`'s comparisons cost half as much (``min`` and ``max`` are
two calls).

The one empty-output policy: an output with a dimension of 0 takes the
general path. Its strides are bounded by each library's own rule
(`Backend._check_empty`: NumPy's in bytes, torch's in elements up to the
first zero), and it costs nothing to build, so nothing is gained by
deciding it twice.

What is left to a backend's short path is its library's own rules: the
dtype (resolved as the general path resolves it), the device, the type of
``x`` or ``out``, and ``out``'s layout. The tests hold this gate against the
rules themselves (``tests/api/test_gate.py``: what it admits, the general
path accepts unchanged) and each short path against the general path
(``tests/api/test_short_path.py``).
"""

from __future__ import annotations

from typing import Any

from . import size as _size
from .integers import MAX_BATCH_DIMS
from .offsets import broadcasts_to

__all__ = [
    "BYTES_PER_ELEMENT",
    "FITS_ANYWHERE",
    "MAX_DIMS",
    "admit",
    "admit_offsets",
    "admit_traced",
]

MAX_DIMS = MAX_BATCH_DIMS + 2
"""The most dimensions an output has (NumPy's 64): the batch's and the matrix's."""
BYTES_PER_ELEMENT = 32
"""Bytes an element an output may need at most, in any dtype, with its
build's scratch: the widest item (16) and the widest scratch (16)."""
FITS_ANYWHERE = (1 << 20) // BYTES_PER_ELEMENT
"""Outputs of up to this many elements fit any machine (1 MiB at the bound
above): no need to read its memory."""

# This machine's memory, for `admit_traced`: read once, as the size rules
# read it, and then one guard of a compiled program (through the size
# module's function, five).
_MEMORY = _size.physical_memory()

# `admit` writes these three as numbers: torch.compile traces it into the
# caller's program, where each module constant read is one more guard
# checked on every call (tests/api/test_gate.py holds them equal).


def admit(shape: tuple[Any, ...], k: Any) -> Any:
    """``k`` as every build takes it, where the call passes the gate (this
    module's text says when); else None.

    Parameters
    ----------
    shape
        The caller's ``(*batch_shape, n_rows, n_cols)``, or ``x``'s shape, as
        given: entries of any type.
    k
        The caller's ``k``, as given.

    Returns
    -------
    int, object or None
        An int ``k`` clamped into ``[-n_rows, n_cols]``; any other ``k`` as
        given, with a batch (a per-matrix ``k``: `admit_offsets` judges its
        shape); None where the call must take the general path.
    """
    # One matrix, the common call, decided at once: unpacked, not looped
    # over (a loop costs ~0.2 us), and clamped by comparisons (min and max
    # are two calls, and under torch.compile two more guards).
    if len(shape) == 2:
        n_rows, n_cols = shape
        if not (
            type(n_rows) is int
            and type(n_cols) is int
            and type(k) is int  # (one offset per matrix needs a batch)
            and n_rows > 0
            and n_cols > 0
        ):
            return None
        # FITS_ANYWHERE, BYTES_PER_ELEMENT. (Memory through the module, as
        # the general path reads it: tests pretend a smaller machine there.)
        if n_rows * n_cols > 32768 and n_rows * n_cols * 32 > _size.physical_memory():
            return None
        if -n_rows <= k <= n_cols:
            return k
        return -n_rows if k < 0 else n_cols
    if len(shape) == 3:  # one batch dimension: unpacked too
        batch, n_rows, n_cols = shape
        if not (
            type(batch) is int
            and type(n_rows) is int
            and type(n_cols) is int
            and batch > 0
            and n_rows > 0
            and n_cols > 0
        ):
            return None
        n = batch * n_rows * n_cols
    elif 3 < len(shape) <= 64:  # MAX_DIMS
        n = 1
        for d in shape:
            if type(d) is not int or d <= 0:
                return None
            n *= d
        n_rows, n_cols = shape[-2], shape[-1]
    else:
        return None
    if n > 32768 and n * 32 > _size.physical_memory():
        return None
    if type(k) is not int:
        return k
    if -n_rows <= k <= n_cols:
        return k
    return -n_rows if k < 0 else n_cols


def admit_traced(shape: tuple[Any, ...], k: Any) -> Any:
    """`admit`'s answer, for a call torch.compile traces: no comparison of
    ``k`` and none of the output's size that a later call's sizes could fail
    (this module's text says why; ``tests/api/test_gate.py`` holds the two
    equal)."""
    if not 2 <= len(shape) <= 64:  # MAX_DIMS
        return None
    n = 1
    for d in shape:
        # (A size of a traced tensor is at least 2 to torch: no guard.)
        if type(d) is not int or d <= 0:
            return None
        n *= d
    # BYTES_PER_ELEMENT: one comparison, whatever the size.
    if n * 32 > _MEMORY:
        return None
    if type(k) is not int:
        return k if len(shape) > 2 else None
    return min(max(k, -shape[-2]), shape[-1])


def admit_offsets(shape: tuple[int, ...], k_shape: Any) -> bool:
    """Whether a per-matrix ``k`` of shape ``k_shape`` passes every check of
    the general path on ``k``'s shape, for an output of ``shape`` that
    `admit` let through: rank at least 1 (a 0-d ``k`` is one offset for
    every matrix, under the scalar rule, the general path's), broadcasting
    to the batch. (Its type, dtype and device are its library's rules, the
    backend's to check first.)"""
    if not len(k_shape):
        return False
    k_shape, batch = tuple(k_shape), shape[:-2]
    return k_shape == batch or broadcasts_to(k_shape, batch)  # (the common case)
