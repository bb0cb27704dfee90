"""`eye_like`, the front end's second entry point (see ``_core``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

from ._backends import backend_of_array, same_library
from ._pipeline import build

if TYPE_CHECKING:  # the types of the overloads (the rules: in _typing)
    import numpy as np

    from ._typing import ArrayT, NDArrayT, OutT, Parameter, ScalarT, ShapeT

__all__ = ["eye_like"]


@overload
def eye_like(
    x: NDArrayT, /, *, k: Any = 0, dtype: None = None, out: None = None
) -> NDArrayT: ...
@overload
def eye_like(
    x: np.ndarray[ShapeT, Any],
    /,
    *,
    k: Any = 0,
    dtype: type[ScalarT] | np.dtype[ScalarT],
    out: None = None,
) -> np.ndarray[ShapeT, np.dtype[ScalarT]]: ...
@overload
def eye_like(
    x: np.ndarray[ShapeT, Any],
    /,
    *,
    k: Any = 0,
    dtype: Any = None,
    out: None = None,
) -> np.ndarray[ShapeT, np.dtype[Any]]: ...
# An nn.Parameter: a plain tensor, as torch.zeros_like's; any other tensor
# keeps its class (the next overload), as there.
@overload
def eye_like(
    x: Parameter[ArrayT], /, *, k: Any = 0, dtype: Any = None, out: None = None
) -> ArrayT: ...
@overload
def eye_like(
    x: ArrayT, /, *, k: Any = 0, dtype: Any = None, out: None = None
) -> ArrayT: ...
@overload
def eye_like(x: Any, /, *, k: Any = 0, dtype: Any = None, out: OutT) -> OutT: ...
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
    DTypeError
        An unsupported ``dtype``, as in `eye`.
    TypeError
        ``x`` is not an array, or a ``k``/``out`` error as in `eye`.
    ValueError
        ``x`` has rank < 2 or no one shape (a nested tensor), or a
        ``k``/``out`` error as in `eye`.

    Examples
    --------
    >>> import numpy as np, eyelike
    >>> eyelike.eye_like(np.empty((2, 3), dtype=np.float32), k=-1)
    array([[0., 0., 0.],
           [1., 0., 0.]], dtype=float32)
    """
    backend = backend_of_array(x, "x")
    if dtype is None and out is None:
        dtype = x.dtype  # (with ``out``: its own, `_pipeline.build`'s rule)
    if out is None or backend._short_out:
        # The short path, where x's library knows its type.
        shape = backend._short_shape(x)
        if shape is not None:
            short = backend.short_eye(shape, k, dtype, x, None, out)
            if short is not None:
                return short
    # The general path: each argument read once (the rest: `_pipeline.build`).
    shape = tuple(backend.shape_of(x, "x"))  # (torch's is a torch.Size)
    if len(shape) < 2:
        msg = f"x must have rank >= 2 (batch dims, rows, cols); got shape {shape}"
        raise ValueError(msg)
    if out is not None and not same_library(backend_of_array(out, "out"), backend):
        msg = f"out must be a {backend.name} array like x; got {type(out).__name__}"
        raise TypeError(msg)
    return build(backend, shape, k, dtype, backend.device_of(x), out, like=x)
