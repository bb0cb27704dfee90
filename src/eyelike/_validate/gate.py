"""The one gate for the short paths: which calls may skip the general path.

A backend's short path (`Backend.short_eye`) builds a call from the
caller's own arguments, only where no rule of the general path could
refuse it, and exactly what that path would build. `admit`, which a short
path runs first, answers the part every library shares. It lets through:

1. **Shape.** ``(*batch_shape, n_rows, n_cols)`` or ``x``'s shape of plain
   Python ints (no ``__index__`` object, no bool, no symbolic size), each
   at least 1 (an empty output takes the general path), `MAX_DIMS` at most.
2. **Size.** An output that fits this machine's memory at
   `BYTES_PER_ELEMENT` bytes an element: no size check can fail.
3. **k.** One Python int, clamped into ``[-n_rows, n_cols]`` (`Build.k`);
   or, with a batch, anything else as given: a short path builds one
   offset per matrix only from an array of its own library and signed
   integer type, whose shape `admit_offsets` admits.

Under torch.compile the gate is traced into the caller's program, where
each comparison of a size or ``k`` known only when the program runs is a
guard, failed by the next value (one more compile each). So while Dynamo
traces, torch's short path runs `admit_traced`: the same answers, ``k``
clamped by ``min`` and ``max`` (no guard), the memory judged by one
comparison (failed only beyond memory). Eagerly, `admit`'s comparisons
cost half as much. What is left to a short path is its library's own
rules: dtype, device, the type of ``x`` or ``out``, ``out``'s layout.
"""

from __future__ import annotations

from typing import Any

from . import size as _size
from .integers import MAX_BATCH_DIMS
from .offsets import broadcasts_to

MAX_DIMS = MAX_BATCH_DIMS + 2
"""The most dimensions an output has (NumPy's 64): the batch's and the matrix's."""
BYTES_PER_ELEMENT = 32
"""The most bytes an element needs, in any dtype: the widest item (16) and
the most a per-matrix build holds beside it (9: a mask's bool, and its index
difference where the batch is one matrix; `Backend._scratch`)."""
FITS_ANYWHERE = (1 << 20) // BYTES_PER_ELEMENT
"""Outputs of up to this many elements fit any machine: memory not read."""

# This machine's memory, for `admit_traced`: one guard of a compiled
# program (five through the size module's function).
_MEMORY = _size.physical_memory()

# `admit` writes these three as numbers: torch.compile traces it into the
# caller's program, where each module constant read is one more guard
# checked on every call (tests/api/test_gate.py holds them equal).


def admit(shape: tuple[Any, ...], k: Any) -> Any:
    """``k`` as every build takes it, where the caller's ``shape`` and
    ``k`` (as given) pass the gate: an int clamped into ``[-n_rows,
    n_cols]``, any other ``k`` as given, with a batch; else None."""
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
    ``k``, and none of the size that a later call's sizes could fail."""
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
    if not -9223372036854775807 <= k <= 9223372036854775807:
        return None  # (the general path's: no constant past int64 meets a size)
    return min(max(k, -shape[-2]), shape[-1])


def admit_offsets(shape: tuple[int, ...], k_shape: Any) -> bool:
    """Whether a per-matrix ``k`` of shape ``k_shape`` passes the general
    path's checks of its shape, for an output of ``shape`` that `admit` let
    through: rank at least 1 (a 0-d ``k`` is a scalar, the general path's),
    broadcasting to the batch."""
    if not len(k_shape):
        return False
    k_shape, batch = tuple(k_shape), shape[:-2]
    return k_shape == batch or broadcasts_to(k_shape, batch)  # (the common case)
