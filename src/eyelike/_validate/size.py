"""Size checks: refuse outputs that overflow or could never be allocated.

The rules every library shares live here; each backend adds its own limits
for shapes with no elements (`Backend.check_empty_shape`), which still
cost strides, or host memory, in some libraries.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

from .integers import INT64_MAX

if TYPE_CHECKING:
    from .._backends._base import Backend

__all__ = ["SMALL_ELEMENTS", "check", "is_small", "physical_memory", "refuse_span"]


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


def refuse_span(shape: tuple[int, ...], span: int, unit: str) -> None:
    """Refuse an empty shape whose strides span more than int64 holds."""
    if span > INT64_MAX:
        msg = (
            f"output shape {shape} has no elements but cannot be "
            f"represented: its strides span {span} {unit}, more than 2**63 - 1"
        )
        raise ValueError(msg)


def check(
    backend: Backend,
    shape: tuple[int, ...],
    itemsize: int,
    on_host: bool,
    scratch: int,
) -> None:
    """Refuse ``shape`` if its size overflows or exceeds this machine.

    ``scratch`` is the backend's temporary memory beyond the output; the
    memory limit applies to outputs in this machine's main memory only.
    Sizes known only when the program runs (symbolic) are not checked: a
    comparison would become a guard of the exported or compiled program,
    fixed by the machine that made it; the library's own allocation judges
    them when it runs.
    """
    n = math.prod(shape)
    if type(n) is not int:  # a symbolic size makes the product symbolic
        return
    if n > INT64_MAX:
        msg = f"output shape {shape} has {n} elements, more than 2**63 - 1"
        raise ValueError(msg)
    nbytes = n * itemsize
    if nbytes > INT64_MAX:
        msg = f"output shape {shape} needs {nbytes} bytes, more than 2**63 - 1"
        raise ValueError(msg)
    if n == 0:
        backend.check_empty_shape(shape, itemsize, on_host)
        return
    nbytes += scratch
    # Looked up through the module so tests can pretend a smaller machine.
    memory = physical_memory()
    if on_host and nbytes > memory:
        msg = (
            f"output shape {shape} needs {nbytes} bytes, more than this "
            f"machine's {memory} bytes of memory"
        )
        raise MemoryError(msg)
