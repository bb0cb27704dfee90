"""OpenVINO **Eye-9**, exactly as the operator specifies it.

``eye(num_rows, num_columns, diagonal_index, batch_shape, output_type=...)``
is the operator with its four inputs as arguments and its attribute as a
keyword. Inputs given as arrays of one namespace (NumPy, CuPy, PyTorch, JAX,
Dask, array-api-strict) make the output in that namespace, on their device;
Python ints alone give a NumPy array. The result is made by `eyelike.eye`.

This module does not import the ``openvino`` package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias, overload

from . import _core, _eye9
from ._validate.dtypes import DTypeError
from ._validate.integers import (
    INT64_MAX,
    INT64_MIN,
    within_int64,
)
from ._validate.text import show

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import torch

    from ._typing import ShapedT, Tensor

    # The inputs that choose no namespace: a count or index as a Python int
    # or a NumPy integer scalar, a batch shape as a list or tuple of them.
    _Int: TypeAlias = int | np.integer[Any]
    _Dims: TypeAlias = list[Any] | tuple[Any, ...] | None

__all__ = ["eye"]


# The result's type: the array inputs' (one namespace at run time), or a
# NumPy array where there are none. A torch tensor gives a plain tensor;
# another library's array subclass is typed as itself (the result is the
# library's base array type). The output type's dtype is not typed.
@overload
def eye(
    num_rows: _Int | npt.NDArray[Any],
    num_columns: _Int | npt.NDArray[Any],
    diagonal_index: _Int | npt.NDArray[Any],
    batch_shape: _Dims | npt.NDArray[Any] = None,
    *,
    output_type: Any,
) -> npt.NDArray[Any]: ...
@overload
def eye(
    num_rows: _Int | Tensor,
    num_columns: _Int | Tensor,
    diagonal_index: _Int | Tensor,
    batch_shape: _Dims | Tensor = None,
    *,
    output_type: Any,
) -> torch.Tensor: ...
@overload
def eye(
    num_rows: _Int | ShapedT,
    num_columns: _Int | ShapedT,
    diagonal_index: _Int | ShapedT,
    batch_shape: _Dims | ShapedT = None,
    *,
    output_type: Any,
) -> ShapedT: ...
@overload
def eye(
    num_rows: Any,
    num_columns: Any,
    diagonal_index: Any,
    batch_shape: Any = None,
    *,
    output_type: Any,
) -> Any: ...
def eye(
    num_rows: Any,
    num_columns: Any,
    diagonal_index: Any,
    batch_shape: Any = None,
    *,
    output_type: Any,
) -> Any:
    """OpenVINO Eye-9: a matrix, or a batch of matrices, with ones on a diagonal.

    ``output[..., i, j]`` is 1 where ``j - i == diagonal_index`` and 0
    elsewhere. This is the operator's formula; where its prose disagrees
    (it says a positive index not smaller than ``num_rows`` gives zeros)
    the formula wins, as in OpenVINO's own runtime: rows=3, cols=4, index 3
    has a one at ``[0, 3]``. Every int64 ``diagonal_index`` is exact (no
    truncation to 32 bits).

    Parameters
    ----------
    num_rows, num_columns : int or array
        Non-negative counts, each a Python int, or a 0-D or 1-element 1-D
        array (or NumPy scalar) of int32 or int64 (Eye-9's ``T_NUM``).
    diagonal_index : int or array
        Index of the diagonal (0 main, > 0 above, < 0 below), given as the
        counts are; must fit in int64.
    batch_shape : array or sequence of int, optional
        Leading batch dimensions: a 1-D int32/int64 array or a sequence of
        non-negative ints. ``None`` (default) or empty: one matrix.
    output_type : str or openvino.Type
        The OpenVINO element type of the result, by name or as an
        ``openvino.Type`` (``openvino.Type.f32``): ``boolean``, ``bf16``,
        ``f16``, ``f32``, ``f64``, ``i8``, ``i16``, ``i32``, ``i64``, ``u8``,
        ``u16``, ``u32`` or ``u64``. ``bf16`` needs ml_dtypes on NumPy and
        is native on PyTorch and JAX.

    Returns
    -------
    array
        A fresh array of shape ``(*batch_shape, num_rows, num_columns)``: in
        the namespace and on the device of the array inputs, or NumPy when
        all inputs are Python ints (or NumPy scalars).

    Raises
    ------
    TypeError
        An input of a type other than int32/int64 (other integers, floats,
        bools, objects), array inputs from different namespaces, or an
        ``output_type`` that is unknown, packed or exotic (``u1``, ``i4``,
        ``u4``, ``nf4``, ``f8e4m3``, ``f8e5m2``, ``string``, ...) or missing
        from the output namespace.
    ValueError
        A scalar input with more than one element, a negative count or
        batch dimension, a ``diagonal_index`` outside int64, a
        ``batch_shape`` that is not 1-D, array inputs on different devices,
        or an output whose size overflows.
    MemoryError
        An output larger than this machine's memory (host backends).

    See Also
    --------
    eyelike.eye : The general form (any dtype, one offset per matrix).

    Examples
    --------
    >>> import numpy as np
    >>> from eyelike import openvino
    >>> openvino.eye(3, 4, 2, output_type="i32")
    array([[0, 0, 1, 0],
           [0, 0, 0, 1],
           [0, 0, 0, 0]], dtype=int32)
    >>> openvino.eye(np.array([2]), 2, np.int64(-1), [2], output_type="boolean")
    array([[[False, False],
            [ True, False]],
    <BLANKLINE>
           [[False, False],
            [ True, False]]])
    """
    dtype_name = _eye9.output_dtype_name(output_type)
    rows, rows_src = _eye9.scalar(num_rows, "num_rows")
    cols, cols_src = _eye9.scalar(num_columns, "num_columns")
    k, k_src = _eye9.scalar(diagonal_index, "diagonal_index")
    batch, batch_src = _eye9.batch(batch_shape)
    within_int64(rows, "num_rows", "fit in int64")
    within_int64(cols, "num_columns", "fit in int64")
    if not INT64_MIN <= k <= INT64_MAX:
        msg = f"diagonal_index must fit in int64 (Eye-9's T_NUM); got {k}"
        raise ValueError(msg)
    backend, dev, xp = _eye9.placement(
        {
            "num_rows": rows_src,
            "num_columns": cols_src,
            "diagonal_index": k_src,
            "batch_shape": batch_src,
        }
    )
    try:
        dtype, _ = backend.dtype(dtype_name, dev)
    except DTypeError as exc:
        msg = f"output_type={show(output_type)} ({dtype_name}) is not available: {exc}"
        raise DTypeError(msg) from None
    return _core.eye(
        rows,
        cols,
        k=k,
        batch_shape=batch,
        dtype=dtype,
        device=dev,
        xp=xp,
    )
