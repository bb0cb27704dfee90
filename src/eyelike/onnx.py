"""ONNX **EyeLike-9**, exactly as the operator specifies it.

``eye_like(x, dtype=..., k=...)`` is the operator with its two attributes as
keyword arguments. It works on any array namespace eyelike supports (NumPy,
CuPy, PyTorch, JAX, Dask, array-api-strict): the result is made by
`eyelike.eye_like` in ``x``'s namespace, on ``x``'s device.

This module does not import the ``onnx`` package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

from . import _core_like
from ._backends import backend_of_array
from ._validate.dtypes import DTypeError, dtype_name
from ._validate.integers import is_integer_scalar, signed_int64, traced_scalar
from ._validate.text import show_typed

if TYPE_CHECKING:  # the types of the overloads, as eyelike.eye_like's
    import numpy as np

    from ._typing import ArrayT, DTypeT, NoArray, Parameter, ShapeT

__all__ = ["eye_like"]

# The TensorProto ``DataType`` values EyeLike-9 allows (for T1 and T2),
# with the standard dtype name each one means.
_TENSOR_TYPES: dict[int, str] = {
    1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
    7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32",
    13: "uint64",
}  # fmt: skip
# Every TensorProto.DataType name, for error messages only.
_ENUM_NAMES = (
    "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
    "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
    "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
    "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1", "FLOAT8E8M0", "UINT2",
    "INT2", "FLOAT6E2M3", "FLOAT6E3M2",
)  # fmt: skip
_ALLOWED = ", ".join(f"{v} {_ENUM_NAMES[v]}" for v in _TENSOR_TYPES)
_DTYPE_WANTS = f"dtype must be None or a TensorProto DataType enum int ({_ALLOWED})"


def _label(value: int) -> str:
    return _ENUM_NAMES[value] if 0 <= value < len(_ENUM_NAMES) else "unknown"


def _attribute(value: Any, wants: str, error: type[TypeError]) -> int:
    """An int attribute's value, or ``error`` saying what it ``wants``."""
    value = traced_scalar(value)
    if not is_integer_scalar(value):
        msg = f"{wants}; got {show_typed(value)}"
        raise error(msg)
    return int(value)


# The result's type: x's, as for eyelike.eye_like (a NumPy array keeps its
# shape type, and its dtype type unless dtype is given; an nn.Parameter
# gives a plain tensor).
@overload
def eye_like(
    x: np.ndarray[ShapeT, DTypeT], *, dtype: None = None, k: int = 0
) -> np.ndarray[ShapeT, DTypeT]: ...
@overload
def eye_like(
    x: np.ndarray[ShapeT, Any], *, dtype: int | None = None, k: int = 0
) -> np.ndarray[ShapeT, np.dtype[Any]]: ...
# (x of unknown type: an unknown result, as in eyelike.openvino.eye.)
@overload
def eye_like(x: NoArray, *, dtype: int | None = None, k: int = 0) -> NoArray: ...
@overload
def eye_like(
    x: Parameter[ArrayT], *, dtype: int | None = None, k: int = 0
) -> ArrayT: ...
@overload
def eye_like(x: ArrayT, *, dtype: int | None = None, k: int = 0) -> ArrayT: ...
def eye_like(x: Any, *, dtype: int | None = None, k: int = 0) -> Any:
    """ONNX EyeLike-9: ones on diagonal ``k`` in an array shaped like ``x``.

    ``output[i, j]`` is 1 where ``j - i == k`` and 0 elsewhere, for every
    ``k`` in int64 (an offset beyond the matrix gives all zeros).

    Parameters
    ----------
    x : array
        The operator's input ``T1``: a rank-2 array of any supported
        namespace, whose dtype is one of the twelve EyeLike-9 types (bool,
        int8/16/32/64, uint8/16/32/64, float16/32/64). Its values are never
        read.
    dtype : int, optional
        The ``dtype`` attribute: a TensorProto ``DataType`` enum value,
        one of 1 FLOAT, 2 UINT8, 3 INT8, 4 UINT16, 5 INT16, 6 INT32,
        7 INT64, 9 BOOL, 10 FLOAT16, 11 DOUBLE, 12 UINT32, 13 UINT64
        (``onnx.TensorProto.FLOAT`` and friends are these ints). Default:
        ``x``'s type.
    k : int, optional
        The ``k`` attribute (int64): 0 the main diagonal, > 0 above,
        < 0 below.

    Returns
    -------
    array
        A fresh array of ``x.shape`` in ``x``'s namespace and on its device.

    Raises
    ------
    TypeError
        ``x`` is not an array or its dtype is not one of the twelve; ``dtype``
        is not one of the twelve enum values (0 UNDEFINED, 8 STRING,
        14/15 COMPLEX, 16 BFLOAT16, unknown numbers, bools, non-ints); ``k``
        is not an int; or ``x``'s namespace lacks the requested type.
    ValueError
        ``x`` is not rank 2, or ``k`` is outside int64.

    See Also
    --------
    eyelike.eye_like : The general form (batches, any dtype, array ``k``).

    Examples
    --------
    >>> import numpy as np
    >>> from eyelike import onnx
    >>> onnx.eye_like(np.zeros((2, 3), dtype=np.int32), k=1)
    array([[0, 1, 0],
           [0, 0, 1]], dtype=int32)
    >>> onnx.eye_like(np.zeros((2, 2), dtype=np.int32), dtype=11)  # DOUBLE
    array([[1., 0.],
           [0., 1.]])
    """
    backend = backend_of_array(x, "x")
    shape = tuple(backend.shape_of(x, "x"))
    if len(shape) != 2:
        msg = f"x must have rank 2 (EyeLike-9 takes a matrix); got shape {shape}"
        raise ValueError(msg)
    if dtype_name(x.dtype) not in _TENSOR_TYPES.values():
        msg = (
            f"x has dtype {x.dtype}, not an EyeLike-9 input type; allowed: "
            f"{', '.join(_TENSOR_TYPES.values())}"
        )
        raise TypeError(msg)
    offset = _attribute(k, "k must be an int (EyeLike-9's int64 attribute)", TypeError)
    signed_int64(offset, "k", "EyeLike-9's attribute type")
    if dtype is None:
        return _core_like.eye_like(x, k=offset)
    value = _attribute(dtype, _DTYPE_WANTS, DTypeError)
    if value not in _TENSOR_TYPES:
        msg = (
            f"dtype={value} ({_label(value)}) is not an EyeLike-9 output type; "
            f"allowed TensorProto enums: {_ALLOWED}"
        )
        raise DTypeError(msg)
    try:
        out_dtype, _ = backend.dtype(_TENSOR_TYPES[value], backend.device_of(x))
    except DTypeError as exc:
        label = _label(value)
        msg = f"dtype={value} ({label}) is not available for {backend.name}: {exc}"
        raise DTypeError(msg) from None
    return _core_like.eye_like(x, k=offset, dtype=out_dtype)
