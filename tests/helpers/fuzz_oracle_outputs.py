"""The fuzz oracle's verdicts on a call's output: whether its size can be
made (on the pretend 64 MiB machine), what an ``out=`` array allows, and the
``Expect`` a call with valid arguments must meet."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .fuzz_namespaces import HOST, INT64_MAX, ITEMSIZE, dtype_name, kind_of, torch
from .fuzz_oracle import LIMIT, MAYBE, Bad, MaybeNamed, Unjudged, dtype_verdict


@dataclass
class Expect:
    """A result that must be the rule's eye, unless one of ``may_fail``."""

    ns: str
    shape: tuple[int, ...]
    dtype: Any  # a NumPy dtype (NumPy, Dask), a dtype name, or MAYBE
    ks: Any  # the offsets as Python ints: an int or an object array
    device: Any = None
    may_fail: tuple[Any, ...] = ()


def _namespace_holds(ns: str, shape: tuple[int, ...], itemsize: int) -> bool:
    """Whether ``ns`` can make an empty array of ``shape`` (asked of it)."""
    if ns == "torch":
        try:
            torch.empty(shape, dtype=torch.uint8, device="meta")
        except RuntimeError:  # its strides or storage size overflow
            return False
        return True
    try:  # NumPy, and the NumPy-made chunks of Dask and array-api-strict
        np.empty(shape, dtype=f"V{itemsize}")
    except ValueError:
        return False
    return True


def _jax_empty_verdict(shape: tuple[int, ...]) -> Any:
    """JAX cannot be asked whether it can make an empty ``shape``: XLA aborts
    the process instead of raising. It spends about 8 bytes per element of
    the leading dimensions (those before the first zero), even for an empty
    array; the dimensions after the first zero cost nothing."""
    lead = math.prod(itertools.takewhile(bool, shape))
    refused = Bad((MemoryError, ValueError), ("shape",))
    if lead * 8 > LIMIT:
        return refused
    return [] if lead * 16 <= LIMIT else [refused]


def size_verdict(
    ns: str, shape: tuple[int, ...], dtype: Any, *, generic: bool, host: bool
) -> Any:
    """What the output's size alone allows: a list of possible failures (empty:
    must succeed), a ``Bad`` (must fail), or an ``Unjudged``."""
    n = math.prod(shape)
    low = (
        1
        if dtype == MAYBE
        else (dtype.itemsize if isinstance(dtype, np.dtype) else ITEMSIZE.get(dtype, 1))
    )
    high = 16 if dtype == MAYBE else low
    if n > INT64_MAX or n * high > INT64_MAX:
        if n * low > INT64_MAX:
            return Bad((ValueError,), ("shape",))
        return Unjudged("maybe_dtype_size_unknown")
    if n == 0:  # fine, if the namespace itself can make the shape
        if ns == "jax":
            return _jax_empty_verdict(shape)
        holds = [_namespace_holds(ns, shape, size) for size in {low, high}]
        if all(holds):
            return []
        if not any(holds):
            return Bad((ValueError,), ("shape",))
        return Unjudged("maybe_dtype_size_unknown")
    n_rows, n_cols = shape[-2:]
    # The generic backend also holds (R, C) scratch: near the limit, either.
    most = n * high + (16 * n_rows * n_cols if generic else 0)
    if not host:
        return [] if most <= LIMIT else Unjudged("lazy_output_too_big_to_check")
    if n * low > LIMIT:
        return Bad((MemoryError,), ("shape",))
    return [] if most <= LIMIT else [Bad((MemoryError,), ("shape",))]


def expectation(
    ns: str,
    shape: tuple[int, ...],
    dtype: Any,
    ks: Any,
    *,
    generic: bool,
    device: Any = None,
) -> Any:
    """An ``Expect`` for valid arguments, after the size check."""
    host = ns in HOST and str(device) != "meta"
    size = size_verdict(ns, shape, dtype, generic=generic, host=host)
    if isinstance(size, Bad) and dtype == MAYBE:  # either one may be named
        return Bad((*size.types, TypeError), (*size.names, "dtype"))
    if isinstance(size, (Bad, Unjudged)):
        return size
    may_fail = (*size, MaybeNamed("dtype")) if dtype == MAYBE else tuple(size)
    return Expect(ns, shape, dtype, ks, device, may_fail)


def out_verdict(out: Any, ns: str | None, shape: tuple[int, ...], dtype: Any) -> Any:
    """What ``out`` allows: the dtype the call must keep, or the failures.

    ``ns`` is the namespace the call asks for (None: out's own); ``dtype`` the
    dtype asked for (None: out's own).
    """
    kind = kind_of(out)
    if kind is None:
        return Bad((TypeError,), ("out",))
    if ns is not None and kind != ns:
        return Bad((TypeError,), ("out",))
    failures = []
    resolved = dtype_verdict(out.dtype if dtype is None else dtype, kind)
    if isinstance(resolved, Unjudged):
        return resolved
    if isinstance(resolved, Bad) or resolved == MAYBE:
        failures.append(Bad((TypeError,), ("dtype", "out")))
    elif dtype_name(out.dtype) != dtype_name(resolved) or (
        kind == "numpy" and out.dtype != resolved
    ):
        failures.append(Bad((TypeError,), ("out",)))
    if kind in ("jax", "dask"):
        failures.append(Bad((TypeError,), ("out", "immutable")))
    if tuple(out.shape) != shape:
        failures.append(Bad((ValueError,), ("out",)))
    if kind == "numpy" and not out.flags.writeable:
        failures.append(Bad((ValueError,), ("out",)))
    if failures:
        return Bad(
            tuple({t for f in failures for t in f.types}),
            tuple({n for f in failures for n in f.names}),
        )
    return resolved
