"""Size checks: refuse outputs that overflow or could never be allocated.

The rules every library shares live here; each backend adds its own limits
for shapes with no elements (``Backend._check_empty``), which still cost
strides, or host memory, in some libraries.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

from .integers import INT64_MAX, is_symbolic

__all__ = [
    "SMALL_ELEMENTS",
    "check",
    "is_small",
    "known_shape",
    "physical_memory",
    "refuse_span",
]


def _read_physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not POSIX: no limit known
        return INT64_MAX


# Read once, at import: torch.compile cannot trace os.sysconf, and the
# answer does not change while the process runs.
_PHYSICAL_MEMORY = _read_physical_memory()


def physical_memory() -> int:
    """This machine's main memory in bytes (2**63 - 1 where unknown)."""
    return _PHYSICAL_MEMORY


# Outputs whose dimensions are plain ints multiplying (zeros left out) to
# at most this many elements pass every size check on any machine: at most
# 1 MiB in the widest dtype, and no scratch. Backends' short paths
# (`Backend.small_eye`) take only these.
SMALL_ELEMENTS = 1 << 16


def is_small(shape: tuple[Any, ...]) -> bool:
    """Whether ``shape`` is plain non-negative ints within `SMALL_ELEMENTS`
    (the zero dimensions left out of the product, since they still cost
    strides)."""
    n = 1
    for d in shape:
        if type(d) is not int or d < 0:
            return False
        if d:
            n *= d
    return n <= SMALL_ELEMENTS


def known_shape(x: Any, name: str, hint: str = "") -> tuple[int, ...]:
    """`Backend.shape_of`'s default; ``hint`` ends its error."""
    shape = tuple(x.shape)
    if not all(isinstance(d, int) or is_symbolic(d) for d in shape):
        msg = f"{name} must have a known shape; got {shape}{hint}"
        raise ValueError(msg)
    return shape


def refuse_span(shape: tuple[int, ...], span: int, unit: str) -> None:
    """Refuse an empty shape whose strides span more than int64 holds."""
    if span > INT64_MAX:
        msg = (
            f"output shape {shape} has no elements but cannot be "
            f"represented: its strides span {span} {unit}, more than 2**63 - 1"
        )
        raise ValueError(msg)


def check(
    shape: tuple[int, ...],
    itemsize: int,
    on_host: bool,
    scratch: int,
    traced_only: Callable[[], bool] = lambda: False,
) -> bool:
    """Refuse ``shape`` if its size overflows or exceeds this machine; return
    whether it has no elements (the library's own limits then apply).

    ``scratch`` is the backend's temporary memory beyond the output; the
    memory limit applies to outputs in this machine's main memory only, and
    not where ``traced_only()`` (asked only then) says nothing is allocated.
    Sizes known only when the program runs (symbolic) are not checked: a
    comparison would become a guard of the exported or compiled program,
    fixed by the machine that made it; the library's own allocation judges
    them when it runs.
    """
    n = math.prod(shape)
    if type(n) is not int:  # a symbolic size makes the product symbolic
        return False
    if n > INT64_MAX:
        msg = f"output shape {shape} has {n} elements, more than 2**63 - 1"
        raise ValueError(msg)
    nbytes = n * itemsize
    if nbytes > INT64_MAX:
        msg = f"output shape {shape} needs {nbytes} bytes, more than 2**63 - 1"
        raise ValueError(msg)
    if n == 0:
        return True
    nbytes += scratch
    # Looked up through the module so tests can pretend a smaller machine.
    memory = physical_memory()
    # Memory is judged where it is allocated: a shape only traced
    # (jax.eval_shape, a FakeTensorMode...) allocates nothing here.
    if on_host and nbytes > memory and not traced_only():
        msg = (
            f"output shape {shape} needs {nbytes} bytes, more than this "
            f"machine's {memory} bytes of memory"
        )
        raise MemoryError(msg)
    return False
