"""The public front end: `eye` here, `eye_like` in ``_core_like``. Each
finds its backend (of ``xp``, ``out`` or ``x``) in the registry, once;
offers the call to its short path (`Backend.short_eye`, behind the gate);
and else reads its own arguments, each once, and hands them with that
backend to the steps both share (`_pipeline.build`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, SupportsIndex, Unpack, overload

from ._backends import DEFAULT, backend_of_array, backend_of_namespace, same_library
from ._pipeline import build
from ._validate.integers import batch_shape as read_batch_shape
from ._validate.integers import dimension
from ._validate.text import show

if TYPE_CHECKING:  # the types of the overloads (the rules: in _typing)
    import numpy as np
    import numpy.typing as npt

    from ._typing import (
        ArrayT,
        CuPyModule,
        EyeKeywords,
        NdarrayModule,
        NoArray,
        NumPyModule,
        OutT,
        ScalarT,
        TorchModule,
    )

__all__ = ["eye"]


# A namespace typed only as a module, or not at all: unknown. (First:
# through ModuleType's __getattr__ it matches every protocol below.)
@overload
def eye(
    n_rows: SupportsIndex,
    n_cols: SupportsIndex | None = None,
    /,
    *,
    dtype: Any = None,
    xp: NoArray,
    out: None = None,
    **keywords: Unpack[EyeKeywords],
) -> Any: ...
# CuPy: its ndarray. (Before NumPy's: see _typing.CuPyModule.)
@overload
def eye(
    n_rows: SupportsIndex,
    n_cols: SupportsIndex | None = None,
    /,
    *,
    dtype: Any = None,
    xp: CuPyModule[ArrayT],
    out: None = None,
    **keywords: Unpack[EyeKeywords],
) -> ArrayT: ...
# NumPy (the default): float64, or the NumPy type or dtype object given.
@overload
def eye(
    n_rows: SupportsIndex,
    n_cols: SupportsIndex | None = None,
    /,
    *,
    dtype: None = None,
    xp: NumPyModule | None = None,
    out: None = None,
    **keywords: Unpack[EyeKeywords],
) -> npt.NDArray[np.float64]: ...
@overload
def eye(
    n_rows: SupportsIndex,
    n_cols: SupportsIndex | None = None,
    /,
    *,
    dtype: type[ScalarT] | np.dtype[ScalarT],
    xp: NumPyModule | None = None,
    out: None = None,
    **keywords: Unpack[EyeKeywords],
) -> npt.NDArray[ScalarT]: ...
@overload
def eye(
    n_rows: SupportsIndex,
    n_cols: SupportsIndex | None = None,
    /,
    *,
    dtype: Any = None,
    xp: NumPyModule | None = None,
    out: None = None,
    **keywords: Unpack[EyeKeywords],
) -> npt.NDArray[Any]: ...
# Another library's namespace: its array class (torch's Tensor, JAX's
# ndarray), as the namespace gives it, whatever the dtype.
@overload
def eye(
    n_rows: SupportsIndex,
    n_cols: SupportsIndex | None = None,
    /,
    *,
    dtype: Any = None,
    xp: TorchModule[ArrayT] | NdarrayModule[ArrayT],
    out: None = None,
    **keywords: Unpack[EyeKeywords],
) -> ArrayT: ...
# out: that array itself.
@overload
def eye(
    n_rows: SupportsIndex,
    n_cols: SupportsIndex | None = None,
    /,
    *,
    dtype: Any = None,
    xp: Any = None,
    out: OutT,
    **keywords: Unpack[EyeKeywords],
) -> OutT: ...
# Any other namespace (Dask, array-api-strict, ...).
@overload
def eye(
    n_rows: SupportsIndex,
    n_cols: SupportsIndex | None = None,
    /,
    *,
    dtype: Any = None,
    xp: Any = None,
    out: None = None,
    **keywords: Unpack[EyeKeywords],
) -> Any: ...
def eye(
    n_rows: SupportsIndex,
    n_cols: SupportsIndex | None = None,
    /,
    *,
    k: Any = 0,
    batch_shape: Any = (),
    dtype: Any = None,
    device: Any = None,
    xp: Any = None,
    out: Any = None,
    chunks: Any = None,
    order: Any = None,
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
        dimensions are never split. cubed takes the same (regular chunks),
        or one entry per dimension; its default fits the Spec.
    order : {'C', 'F'}, optional
        Memory layout of a fresh result, as in NumPy's and CuPy's ``eye``:
        row-major (``'C'``, the default) or column-major (``'F'``); for Dask,
        the layout of each chunk. Namespaces with no memory order (torch,
        JAX, ...) refuse it, and so does a call with ``out``.

    Returns
    -------
    array
        A fresh, writeable array of shape ``(*batch_shape, n_rows, n_cols)``,
        or ``out``.

    Raises
    ------
    DTypeError
        An unsupported ``dtype``: both a TypeError and a ValueError.
    TypeError
        A bool or non-integer count or ``k``, an ``out`` of the wrong dtype
        or of an immutable namespace.
    ValueError
        A negative count, a ``k`` that does not broadcast to ``batch_shape``,
        a shape whose size overflows, an ``out`` of the wrong shape or device,
        or one that its library would refuse to write (a tensor that requires
        grad, an inference tensor outside ``torch.inference_mode``).
    MemoryError
        An output larger than this machine's memory (host backends; a
        shape only traced, as by ``jax.eval_shape``, allocates nothing).

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
    if out is None:
        backend = DEFAULT if xp is None else backend_of_namespace(xp)
    else:
        backend = backend_of_array(out, "out")
        if xp is not None and not same_library(backend_of_namespace(xp), backend):
            msg = f"out is a {backend.name} array but xp={show(xp)} was asked for"
            raise TypeError(msg)
    # A count in another form (a NumPy integer, a 0-d tensor) is read now; a
    # plain int as it is: the gate admits positive ones only.
    rows = n_rows if type(n_rows) is int else dimension(n_rows, "n_rows")
    if n_cols is None:
        cols = rows
    else:
        cols = n_cols if type(n_cols) is int else dimension(n_cols, "n_cols")
    batch = (batch_shape,) if type(batch_shape) is int else batch_shape
    if (
        type(batch) is tuple
        and chunks is None
        and order is None
        and (out is None or (xp is None and backend._short_out))
    ):
        # The short path (which runs the gate first).
        shape = (*batch, rows, cols) if batch else (rows, cols)
        short = backend.short_eye(shape, k, dtype, None, device, out)
        if short is not None:
            return short
    # The general path: each argument read by its rule (the rest: `build`),
    # the counts too: a plain int was left to the short path's gate.
    rows = dimension(rows, "n_rows")
    cols = rows if n_cols is None else dimension(cols, "n_cols")
    shape = (*read_batch_shape(batch_shape), rows, cols)
    if out is not None and device is None:
        device = backend.device_of(out)
    if device is not None:
        device = backend.device(device)
    return build(backend, shape, k, dtype, device, out, chunks=chunks, order=order)
