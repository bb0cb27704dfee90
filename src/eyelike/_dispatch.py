"""The general path of `eye` and `eye_like`: find the backend, check every
argument through its rules once, then build. Nothing here knows which
library it is talking to."""

from __future__ import annotations

from typing import Any

from ._backends import BACKENDS, DEFAULT, backend_of_array, backend_of_namespace
from ._backends._base import Backend, Build
from ._validate.integers import batch_shape as _batch_shape
from ._validate.integers import dimension
from ._validate.offsets import is_library_array
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
    if chunks is not None and "chunks" not in backend.takes:
        which = " and ".join(n.capitalize() for n in _taking("chunks"))
        msg = (
            f"chunks is for {which} only; got chunks={show(chunks)} with {backend.name}"
        )
        raise TypeError(msg)
    if order is not None:
        _check_order(order, backend, out)
    dtype, itemsize = backend.dtype(dtype, device)
    if type(k) is not int and is_library_array(k):
        _check_k_library(k, backend)
    offsets = backend.offsets(k, batch, n_rows, n_cols)
    shape = (*batch, n_rows, n_cols)
    backend.check_output(shape, dtype, itemsize, device, offsets, out)
    return backend.eye(
        Build(shape, offsets, dtype, device, out, chunks, like, order or "C")
    )


def _check_order(order: Any, backend: Backend, out: Any) -> None:
    """``order`` is 'C' or 'F', for a fresh result of a namespace with a
    memory order (as NumPy's and CuPy's own ``eye`` take it)."""
    if not (isinstance(order, str) and order in ("C", "F")):
        msg = f"order must be 'C' or 'F'; got {show(order)}"
        raise ValueError(msg)
    if "order" not in backend.takes:
        msg = (
            f"order is for namespaces with a memory order "
            f"({', '.join(_taking('order'))}); {backend.name} has none; got "
            f"order={order!r}"
        )
        raise TypeError(msg)
    if out is not None:
        msg = f"order={order!r} is for a fresh result; out has its own layout"
        raise TypeError(msg)


def _check_k_library(k: Any, backend: Backend) -> None:
    """An array ``k`` (not host data) must be of the result's own library."""
    owner = backend_of_array(k, "k")
    if owner is not backend:
        # NumPy's arrays are host data, which every backend takes.
        arrays = "NumPy" if backend is DEFAULT else f"NumPy or {backend.name}"
        where = f" (xp={owner.namespaces[0]})" if owner.namespaces else ""
        msg = (
            f"k is a {owner.name} array, but the result is made by "
            f"{backend.name}: give k as an int, a Python sequence or a "
            f"{arrays} array (k.tolist(), say), or make the result with "
            f"{owner.name}{where}"
        )
        raise TypeError(msg)


def _taking(keyword: str) -> list[str]:
    """The names of the libraries that take ``keyword`` (for messages)."""
    return [cls.name for cls in BACKENDS if keyword in cls.takes]


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
        backend = DEFAULT if xp is None else backend_of_namespace(xp)
    rows = dimension(n_rows, "n_rows")
    cols = rows if n_cols is None else dimension(n_cols, "n_cols")
    batch = _batch_shape(batch_shape)
    if device is not None:
        device = backend.device(device)
    return _validate_and_build(
        backend, batch, rows, cols, k, dtype, device, out, chunks, None, order
    )


def general_eye_like(backend: Backend, x: Any, k: Any, dtype: Any, out: Any) -> Any:
    """`eye_like` for every input, of ``backend`` (``x``'s): validate, build."""
    shape = backend.shape_of(x, "x")
    if len(shape) < 2:
        msg = (
            f"x must have rank >= 2 (batch dims, rows, cols); got shape {tuple(shape)}"
        )
        raise ValueError(msg)
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
