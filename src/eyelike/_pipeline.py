"""The general path of `eye` and `eye_like`: each call the short path
(`Backend.short_eye`, behind ``_validate.gate``) declines comes to `build`,
its own arguments read by its entry point, and takes the same steps in the
same order, each question asked of its backend once, whichever library it
is: the keywords, the dtype, ``k`` (then the short path again), the size,
``out``, and `Backend.eye` with every answer in one `Build`.
"""

from __future__ import annotations

from typing import Any

from ._backends import BACKENDS, DEFAULT, backend_of_array, same_library
from ._backends._base import Backend, Build
from ._validate import offsets as _k
from ._validate import out as _out
from ._validate import size as _size
from ._validate.text import show

__all__ = ["build"]


def build(
    backend: Backend,
    shape: tuple[int, ...],
    k: Any,
    dtype: Any,
    device: Any,
    out: Any,
    *,
    chunks: Any = None,
    order: Any = None,
    like: Any = None,
) -> Any:
    """A call whose own arguments its entry point read (``shape``, ``out``,
    ``device``: checked; ``dtype``: None for ``out``'s) through the steps
    both share, then built."""
    if chunks is not None and "chunks" not in backend.takes:
        which = " and ".join(n.capitalize() for n in _taking("chunks"))
        msg = (
            f"chunks is for {which} only; got chunks={show(chunks)} with {backend.name}"
        )
        raise TypeError(msg)
    if order is not None:  # 'C' or 'F', for a fresh result with a memory order
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
    if dtype is None and out is not None:
        dtype = out.dtype
    dtype, itemsize = backend.dtype(dtype, device)
    k = _offsets(backend, k, shape[:-2], shape[-2], shape[-1], device)
    if (
        out is None
        and chunks is None
        and order is None
        and (type(k) is int or not _k.is_library_array(k))
        and (like is None or backend._short_shape(like) is not None)
    ):
        # Each argument read, whatever its form (a NumPy integer, a list, a
        # dtype name, a device string): the short path again, as for a
        # plain call. (A library's k or an unknown like: already offered.
        # Inline: under torch.compile each function read is one more guard.)
        short = backend.short_eye(shape, k, dtype, like, device, None)
        if short is not None:
            return short
    # The size: one that overflows, that the library cannot make empty, or
    # whose part this process holds cannot fit this machine's memory.
    nbytes = _size.checked_bytes(shape, itemsize)  # (None: known when it runs)
    if nbytes == 0:
        backend._check_empty(shape, itemsize, device)
    elif nbytes is not None:
        if not isinstance(k, int) and backend._masks(shape, dtype, out):
            # The mask beside it: a bool an element, and a matrix of int64.
            nbytes += nbytes // itemsize + 8 * shape[-2] * shape[-1]
        if nbytes > _size.physical_memory():
            # Judged where it is allocated (`Backend._held_bytes`).
            of = like if out is None else out
            nbytes = backend._held_bytes(of, shape, nbytes, device)
            if nbytes > _size.physical_memory():
                _size.refuse_memory(shape, nbytes)
    if out is not None:
        _check_out(backend, out, shape, dtype, device)
    # Positional, in the fields' order: a NamedTuple made by keywords costs
    # ~0.2 us more, a fifth of np.eye(3) itself.
    return backend.eye(Build(shape, k, dtype, device, out, chunks, like, order or "C"))


def _offsets(
    backend: Backend,
    k: Any,
    batch: tuple[int, ...],
    n_rows: int,
    n_cols: int,
    device: Any,
) -> Any:
    """``k`` checked and clamped into ``[-n_rows, n_cols]``: an int, an int64
    NumPy array of host values, or an integer array of the result's library
    broadcastable to ``batch``, on the result's ``device`` (`Backend._clamp`)."""
    if type(k) is int:
        # Past int64 is past any size: clamped first by numbers (a module
        # constant is a guard), so that no constant past int64 meets a
        # size torch.compile traces (symbolic, though an int to its eye).
        if not -9223372036854775807 <= k <= 9223372036854775807:
            k = 9223372036854775807 if k > 0 else -9223372036854775807
        if type(n_rows) is int and type(n_cols) is int:
            # The common call: no more than this (no function: a guard).
            # (Traced, min and max of symbolic sizes make no guard either.)
            return min(max(k, -n_rows), n_cols)
    else:
        k = backend._own_k(k)
    if not _k.is_library_array(k):
        return _k.host_offsets(k, batch, backend._host_bounds(n_rows, n_cols))
    owner = backend_of_array(k, "k")
    if owner is not backend and not same_library(owner, backend):
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
    integral = backend._xp.isdtype(k.dtype, "integral")  # pyright: ignore[reportAttributeAccessIssue]
    _k.refuse_dtype(k, bool(integral))
    _k.check_broadcast(backend.shape_of(k, "k"), batch)
    return backend._clamp(k, n_rows, n_cols, device)


def _check_out(
    backend: Backend, out: Any, shape: tuple[int, ...], dtype: Any, device: Any
) -> None:
    """Refuse an ``out`` that cannot take the result: immutable, of another
    shape, dtype or device, not writable, or whose elements share memory."""
    if "out" not in backend.takes:
        msg = f"out: {backend.name} arrays are immutable and cannot be filled in place"
        raise TypeError(msg)
    # The library's own refusals first (a nested tensor has no shape).
    _out.check(out, shape, dtype, backend._out_strides(out), backend)
    if device is None:
        return
    have = backend.device_of(out)
    if not backend._same_device(have, device):
        msg = f"out is on device {have}; device {show(device)} was asked for"
        raise ValueError(msg)


def _taking(keyword: str) -> list[str]:
    """The names of the libraries that take ``keyword`` (for messages)."""
    return [cls.name for cls in BACKENDS if keyword in cls.takes]
