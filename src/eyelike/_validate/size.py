"""Size checks: refuse outputs that overflow or could never be allocated
(each backend adds its limits for shapes with no elements, `_check_empty`)."""

from __future__ import annotations

import math
import os
from typing import Any

from .integers import INT64_MAX, is_symbolic

# Read once, at import: torch.compile cannot trace os.sysconf, and the
# answer does not change while the process runs.
try:
    _PHYSICAL_MEMORY = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
except (AttributeError, ValueError, OSError):  # not POSIX: no limit known
    _PHYSICAL_MEMORY = INT64_MAX


def physical_memory() -> int:
    """This machine's main memory in bytes (2**63 - 1 where unknown)."""
    return _PHYSICAL_MEMORY


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


def checked_bytes(shape: tuple[int, ...], itemsize: int) -> int | None:
    """The bytes an output of ``shape`` holds at ``itemsize`` bytes an
    element, refused where its element count or byte size overflows int64.

    None where a size is symbolic (a comparison would be a guard of the
    compiled program, fixed by the machine that made it: the library's
    allocation judges it) or unknown to a lazy namespace (None; its engine
    bounds its memory).
    """
    try:
        n = math.prod(shape)
    except TypeError:  # an unknown size (None): no product
        return None
    if type(n) is not int:  # a symbolic size makes the product symbolic
        return None
    if n > INT64_MAX:
        msg = f"output shape {shape} has {n} elements, more than 2**63 - 1"
        raise ValueError(msg)
    nbytes = n * itemsize
    if nbytes > INT64_MAX:
        msg = f"output shape {shape} needs {nbytes} bytes, more than 2**63 - 1"
        raise ValueError(msg)
    return nbytes


def refuse_memory(shape: tuple[int, ...], nbytes: int) -> None:
    """Refuse an output of ``shape`` that needs ``nbytes`` of this machine's
    memory, more than it has."""
    # Looked up through the module so tests can pretend a smaller machine.
    memory = physical_memory()
    msg = (
        f"output shape {shape} needs {nbytes} bytes, more than this "
        f"machine's {memory} bytes of memory"
    )
    raise MemoryError(msg)
