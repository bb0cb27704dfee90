"""The general path of `eye` and `eye_like`: find the backend, check every
argument through its rules once, then build. Nothing here knows which
library it is talking to."""

from __future__ import annotations

from typing import Any

from ._backends import NUMPY, backend_of_array, backend_of_namespace
from ._backends._base import Backend, Build
from ._validate.dtypes import resolve as cached_dtype
from ._validate.integers import batch_shape as _batch_shape
from ._validate.integers import dimension
from ._validate.offsets import clamped_offsets
from ._validate.out import check_out
from ._validate.size import check as check_size
from ._validate.text import show

__all__ = ["general_eye", "general_eye_like"]


def _validate_and_build(
    backend: Backend,
    batch: tuple[int, ...],
    n_rows: int,
    n_cols: int,
    k: Any,
    dtype: Any,
    device: Any,
    out: Any,
    chunks: Any,
    like: Any,
    order: Any = None,
) -> Any:
    """Check dtype, ``k``, size and ``out`` for ``backend``, then build."""
    if chunks is not None and not backend.takes_chunks:
        msg = f"chunks is for Dask only; got chunks={show(chunks)} with {backend.name}"
        raise TypeError(msg)
    if order is not None:
        _check_order(order, backend, out)
    dtype, itemsize = cached_dtype(backend, dtype, device)
    shape = (*batch, n_rows, n_cols)
    offsets = clamped_offsets(k, backend, batch, n_rows, n_cols)
    check_size(
        backend,
        shape,
        itemsize,
        backend.on_host(device),
        backend.scratch_bytes(n_rows, n_cols, offsets),
    )
    if out is not None:
        check_out(out, backend, shape, dtype, device)
    return backend.eye(
        Build(shape, offsets, dtype, device, out, chunks, like, order or "C")
    )


def _check_order(order: Any, backend: Backend, out: Any) -> None:
    """``order`` is 'C' or 'F', for a fresh result of a namespace with a
    memory order (as NumPy's and CuPy's own ``eye`` take it)."""
    if not (isinstance(order, str) and order in ("C", "F")):
        msg = f"order must be 'C' or 'F'; got {show(order)}"
        raise ValueError(msg)
    if not backend.takes_order:
        msg = (
            f"order is for namespaces with a memory order (numpy, cupy, dask); "
            f"{backend.name} has none; got order={order!r}"
        )
        raise TypeError(msg)
    if out is not None:
        msg = f"order={order!r} is for a fresh result; out has its own layout"
        raise TypeError(msg)


def general_eye(
    n_rows: Any,
    n_cols: Any,
    k: Any,
    batch_shape: Any,
    dtype: Any,
    device: Any,
    xp: Any,
    out: Any,
    chunks: Any,
    order: Any,
) -> Any:
    """`eye` for every input: find the backend, validate, build."""
    if out is not None:
        backend = backend_of_array(out, "out")
        if xp is not None and backend_of_namespace(xp) is not backend:
            msg = f"out is a {backend.name} array but xp={show(xp)} was asked for"
            raise TypeError(msg)
        if dtype is None:
            dtype = out.dtype
        if device is None:
            device = backend.device_of(out)
    else:
        backend = NUMPY if xp is None else backend_of_namespace(xp)
    rows = dimension(n_rows, "n_rows")
    cols = rows if n_cols is None else dimension(n_cols, "n_cols")
    batch = _batch_shape(batch_shape)
    if device is not None:
        device = backend.resolve_device(device)
    return _validate_and_build(
        backend, batch, rows, cols, k, dtype, device, out, chunks, None, order
    )


def general_eye_like(x: Any, k: Any, dtype: Any, out: Any) -> Any:
    """`eye_like` for every input: find the backend, validate, build."""
    backend = backend_of_array(x, "x")
    shape = backend.shape_of(x, "x")
    if len(shape) < 2:
        msg = (
            f"x must have rank >= 2 (batch dims, rows, cols); got shape {tuple(shape)}"
        )
        raise ValueError(msg)
    if out is None:
        want = x.dtype if dtype is None else dtype
        small = backend.small_eye(shape, k, want, x)
        if small is not None:
            return small
    shape = tuple(shape)  # a plain tuple in messages (torch's is a torch.Size)
    if out is not None and backend_of_array(out, "out") is not backend:
        msg = f"out must be a {backend.name} array like x; got {type(out).__name__}"
        raise TypeError(msg)
    if dtype is None:
        dtype = x.dtype if out is None else out.dtype
    device = backend.device_of(x)
    return _validate_and_build(
        backend, shape[:-2], shape[-2], shape[-1], k, dtype, device, out, None, x
    )
