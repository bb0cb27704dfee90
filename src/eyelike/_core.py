"""The public front end: validate everything, then dispatch to a backend."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _args, _generic, _numpy
from ._compat import NUMPY, Namespace, namespace_of, namespace_of_module
from ._compat import device as _device_of

__all__ = ["eye", "eye_like"]


# Namespaces whose backend needs no full-size temporaries.
_NATIVE = frozenset({"numpy", "cupy", "torch", "dask"})


def _on_host(ns: Namespace, dev: Any) -> bool:
    """Whether the output will live in this machine's main memory."""
    if ns.kind in ("numpy", "array_api_strict"):
        return True
    if ns.kind == "torch":
        return dev is None or str(dev).startswith("cpu")
    if ns.kind == "jax":
        import jax

        platform = jax.default_backend() if dev is None else dev.platform
        return bool(platform == "cpu")
    return False


def _make(
    ns: Namespace,
    batch: tuple[int, ...],
    n_rows: int,
    n_cols: int,
    k: Any,
    dtype: Any,
    dev: Any,
    out: Any,
    chunks: Any = None,
    like: Any = None,
) -> Any:
    """Validate the rest, then run the one backend that fits ``ns``."""
    if chunks is not None and ns.kind != "dask":
        msg = f"chunks is for Dask only; got chunks={chunks!r} with {ns.kind}"
        raise TypeError(msg)
    dtype, itemsize = _args.resolve_dtype(dtype, ns, dev)
    shape = (*batch, n_rows, n_cols)
    offsets = _args.offsets(k, ns, batch, n_rows, n_cols)
    # The generic path also holds an (R, C) index difference and mask.
    generic = ns.kind not in _NATIVE or (
        ns.kind == "torch" and not isinstance(offsets, int)
    )
    scratch = n_rows * n_cols * 9 if generic else 0
    _args.check_size(
        shape,
        itemsize,
        _on_host(ns, dev),
        scratch,
        kind=ns.kind,
    )
    if out is not None:
        _args.check_out(out, ns, shape, dtype, dev)

    if ns.kind == "numpy":
        return _numpy.eye(shape, offsets, dtype, out)
    if ns.kind == "cupy":
        from . import _cupy

        return _cupy.eye(shape, offsets, dtype, dev, out)
    if ns.kind == "dask":
        from . import _dask

        return _dask.eye(shape, offsets, dtype, chunks, like)
    if ns.kind == "torch" and isinstance(offsets, int):
        from . import _torch

        return _torch.eye(shape, offsets, dtype, dev, out)
    return _generic.eye(ns.xp, shape, offsets, dtype, dev, out)


# NumPy dtypes by how callers spell them, filled in as they are validated.
_NUMPY_DTYPES: dict[Any, Any] = {}
_FAST_MAX_ELEMENTS = 1 << 16


def _numpy_fast(n_rows: int, n_cols: int | None, k: int, dtype: Any) -> Any:
    """``eye`` of one small NumPy matrix, or None to take the general path."""
    cols = n_rows if n_cols is None else n_cols
    if not (
        0 <= n_rows <= _FAST_MAX_ELEMENTS
        and 0 <= cols <= _FAST_MAX_ELEMENTS
        and n_rows * cols <= _FAST_MAX_ELEMENTS
    ):
        return None
    # Keyed by type too: equal-hashing dtypes of other libraries (which may
    # warn when compared with NumPy's) never meet in the dict.
    key = (type(dtype), dtype)
    try:
        dt = _NUMPY_DTYPES.get(key)
    except TypeError:  # unhashable: let the general path explain
        return None
    if dt is None:
        if not isinstance(dtype, (str, type, np.dtype)) and dtype is not None:
            return None
        dt, _ = _args.resolve_dtype(dtype, NUMPY, None)
        if len(_NUMPY_DTYPES) < 256:
            _NUMPY_DTYPES[key] = dt
    return _numpy.eye_2d(n_rows, cols, k, dt)


def eye(
    n_rows: int,
    n_cols: int | None = None,
    /,
    *,
    k: Any = 0,
    batch_shape: Any = (),
    dtype: Any = None,
    device: Any = None,
    xp: Any = None,
    out: Any = None,
    chunks: Any = None,
) -> Any:
    """Return a matrix, or a batch of matrices, with ones on diagonal ``k``.

    Element ``[..., row, col]`` is 1 where ``col - row == k`` and 0
    elsewhere, for every integer ``k``: offsets beyond the matrix give zeros.

    Parameters
    ----------
    n_rows : int
        Number of rows ``R``: a non-negative int or object with ``__index__``.
    n_cols : int, optional
        Number of columns ``C``; defaults to ``n_rows``.
    k : int or array of int, optional
        Diagonal offset: 0 the main diagonal, > 0 above, < 0 below. Any
        Python int (no 64-bit limit). An integer array broadcastable to
        ``batch_shape`` gives one offset per matrix; it may come from ``xp``,
        NumPy, or be a Python sequence.
    batch_shape : int or sequence of int, optional
        Leading batch dimensions; ``()`` (default) for one matrix.
    dtype : dtype or str, optional
        Any numeric or bool dtype of the namespace (a dtype object, a NumPy
        dtype or type, or a name such as ``"float32"``). Default: the
        namespace's default floating dtype, or ``out.dtype``.
    device : optional
        Device for the result, passed to the namespace. Default: the
        namespace's default device, or ``out``'s.
    xp : namespace, optional
        Array namespace (``numpy``, ``cupy``, ``torch``, ``jax.numpy``,
        ``dask.array``, ``array_api_strict``...). Default: NumPy, or ``out``'s.
    out : array, optional
        Array to fill in place; shape ``(*batch_shape, R, C)`` and matching
        dtype/namespace/device. Untouched if the call fails.
    chunks : optional
        Dask only: the chunks of the lazy result along the batch dimensions
        (every chunk holds whole matrices), in any form ``dask.array``
        accepts (``64``, ``(16, -1)``, ``{0: 8}``, ``"auto"``, ``"64MiB"``).
        Default: from Dask's ``array.chunk-size`` setting. The matrix
        dimensions are never split.

    Returns
    -------
    array
        A fresh, writeable array of shape ``(*batch_shape, n_rows, n_cols)``,
        or ``out``.

    Raises
    ------
    TypeError
        A bool or non-integer count or ``k``, an unsupported dtype, an ``out``
        of the wrong dtype or of an immutable namespace.
    ValueError
        A negative count, a ``k`` that does not broadcast to ``batch_shape``,
        a shape whose size overflows, an ``out`` of the wrong shape or device.
    MemoryError
        An output larger than this machine's memory (host backends).

    Examples
    --------
    >>> import eyelike
    >>> eyelike.eye(2, 3, k=1, dtype="int8")
    array([[0, 1, 0],
           [0, 0, 1]], dtype=int8)
    >>> eyelike.eye(2, batch_shape=2, k=[0, -1], dtype=bool).astype(int)
    array([[[1, 0],
            [0, 1]],
    <BLANKLINE>
           [[0, 0],
            [1, 0]]])
    """
    if (
        out is None
        and xp is None
        and device is None
        and type(k) is int
        and type(n_rows) is int
        and (n_cols is None or type(n_cols) is int)
        and type(batch_shape) is tuple
        and not batch_shape
        and chunks is None
    ):
        # The common tiny call: skip the general machinery (same results).
        fast = _numpy_fast(n_rows, n_cols, k, dtype)
        if fast is not None:
            return fast
    if out is not None:
        ns = namespace_of(out, "out")
        if xp is not None and namespace_of_module(xp) != ns:
            msg = f"out is a {ns.kind} array but xp={xp!r} was asked for"
            raise TypeError(msg)
        if dtype is None:
            dtype = out.dtype
        if device is None and ns is not NUMPY:
            device = _device_of(out)
    else:
        ns = NUMPY if xp is None else namespace_of_module(xp)
    rows = _args.count(n_rows, "n_rows")
    cols = rows if n_cols is None else _args.count(n_cols, "n_cols")
    batch = _args.batch_dims(batch_shape)
    dev = _args.resolve_device(device, ns)
    return _make(ns, batch, rows, cols, k, dtype, dev, out, chunks)


def eye_like(x: Any, /, *, k: Any = 0, dtype: Any = None, out: Any = None) -> Any:
    """Return an eye with the shape, namespace and device of ``x``.

    The last two dimensions of ``x`` are the matrix; leading ones are batch
    dimensions. ``x``'s values are never read.

    Parameters
    ----------
    x : array
        An array of rank >= 2 from any supported namespace.
    k : int or array of int, optional
        Diagonal offset, or one per matrix (broadcastable to ``x.shape[:-2]``).
    dtype : dtype or str, optional
        Result dtype; default ``out.dtype`` when ``out`` is given, else
        ``x.dtype`` (which must then be numeric or bool).
    out : array, optional
        Array to fill in place, of ``x``'s shape, namespace and device.

    Returns
    -------
    array
        A fresh array of ``x.shape`` on ``x``'s device, or ``out``.

    Raises
    ------
    TypeError
        ``x`` is not an array, or a dtype/``k``/``out`` error as in `eye`.
    ValueError
        ``x`` has rank < 2, or a ``k``/``out`` error as in `eye`.

    Examples
    --------
    >>> import numpy as np, eyelike
    >>> eyelike.eye_like(np.empty((2, 3), dtype=np.float32), k=-1)
    array([[0., 0., 0.],
           [1., 0., 0.]], dtype=float32)
    """
    if type(x) is np.ndarray and x.ndim == 2 and type(k) is int and out is None:
        fast = _numpy_fast(
            x.shape[0], x.shape[1], k, x.dtype if dtype is None else dtype
        )
        if fast is not None:
            return fast
    ns = namespace_of(x, "x")
    shape = tuple(x.shape)
    if not all(isinstance(d, int) for d in shape):
        # Dask arrays of unknown chunk sizes report nan (or None) dimensions.
        msg = (
            f"x must have a known shape; got {shape} (for Dask, call "
            f"x.compute_chunk_sizes() first)"
        )
        raise ValueError(msg)
    if len(shape) < 2:
        msg = f"x must have rank >= 2 (batch dims, rows, cols); got shape {shape}"
        raise ValueError(msg)
    if out is not None and namespace_of(out, "out") != ns:
        msg = f"out must be a {ns.kind} array like x; got {type(out).__name__}"
        raise TypeError(msg)
    if dtype is None:
        dtype = x.dtype if out is None else out.dtype
    dev = None if ns is NUMPY else _device_of(x)
    return _make(ns, shape[:-2], shape[-2], shape[-1], k, dtype, dev, out, like=x)
