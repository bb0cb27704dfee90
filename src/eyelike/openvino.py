"""OpenVINO **Eye-9**, exactly as the operator specifies it.

``eye(num_rows, num_columns, diagonal_index, batch_shape, output_type=...)``
is the operator with its four inputs as arguments and its attribute as a
keyword. Inputs given as arrays of one namespace (NumPy, CuPy, PyTorch, JAX,
Dask, array-api-strict) make the output in that namespace, on their device;
Python ints alone give a NumPy array. The result is made by `eyelike.eye`.

This module does not import the ``openvino`` package.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias, overload

import numpy as np
from array_api_compat import array_namespace

from . import _core
from ._backends import DEFAULT, backend_of_array
from ._backends._base import Backend
from ._validate import dtypes as _dtypes
from ._validate.dtypes import DTypeError
from ._validate.integers import (
    INT64_MAX,
    INT64_MIN,
    holds_no_values,
    is_integer_scalar,
    is_time,
    within_int64,
)
from ._validate.text import show

if TYPE_CHECKING:
    import numpy.typing as npt

    from ._typing import ArrayT, NoArray, ShapedT, Tensor

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
# (Taken by no argument but one of unknown type, which every overload takes:
# its result, unlike any other, tells pyright that the call's is unknown,
# as mypy finds; else pyright takes the first, a NumPy array.)
@overload
def eye(
    num_rows: _Int | NoArray,
    num_columns: _Int | NoArray,
    diagonal_index: _Int | NoArray,
    batch_shape: _Dims | NoArray = None,
    *,
    output_type: Any,
) -> NoArray: ...
@overload
def eye(
    num_rows: _Int | Tensor[ArrayT],
    num_columns: _Int | Tensor[ArrayT],
    diagonal_index: _Int | Tensor[ArrayT],
    batch_shape: _Dims | Tensor[ArrayT] = None,
    *,
    output_type: Any,
) -> ArrayT: ...
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
    dtype_name = _output_dtype_name(output_type)
    rows, rows_src = _scalar(num_rows, "num_rows")
    cols, cols_src = _scalar(num_columns, "num_columns")
    k, k_src = _scalar(diagonal_index, "diagonal_index")
    batch, batch_src = _batch(batch_shape)
    within_int64(rows, "num_rows", "fit in int64")
    within_int64(cols, "num_columns", "fit in int64")
    if not INT64_MIN <= k <= INT64_MAX:
        msg = f"diagonal_index must fit in int64 (Eye-9's T_NUM); got {k}"
        raise ValueError(msg)
    backend, dev, xp = _placement(
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


# Eye-9's inputs, read as the operator specifies them: ``T_NUM`` scalars (a
# Python int, or a 0-D or 1-element int32/int64 array), the 1-D
# ``batch_shape``, the ``output_type`` element type (by name or as an
# ``openvino.Type``), and the one namespace the array inputs come from.


# OpenVINO element type name -> standard dtype name, for every type produced.
_OUTPUT_TYPES = {
    "boolean": "bool",
    "bf16": "bfloat16",
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
}
# OpenVINO element types that are packed, 8-bit float or not numeric: refused.
_REFUSED_TYPES = frozenset(
    {
        "u1", "u2", "u3", "u4", "u6", "i4", "nf4", "f4e2m1", "f8e4m3",
        "f8e5m2", "f8e8m0", "string", "dynamic", "undefined",
    }
)  # fmt: skip
_ALLOWED_TYPES = ", ".join(_OUTPUT_TYPES)
_T_NUM = ("int32", "int64")


def _is_openvino_type(value: Any) -> bool:
    """An ``openvino.Type`` (such as ``openvino.Type.f32``), known by its
    class without importing OpenVINO."""
    cls = type(value)
    return cls.__name__ == "Type" and cls.__module__.partition(".")[0] == "openvino"


def _output_dtype_name(output_type: Any) -> str:
    """The standard dtype name for an OpenVINO element type, given by name
    or as an ``openvino.Type``."""
    if _is_openvino_type(output_type):
        output_type = output_type.get_type_name()  # "f32", "boolean", ...
    if not isinstance(output_type, str):
        msg = (
            f"output_type must be an OpenVINO element type name (one of "
            f"{_ALLOWED_TYPES}) or an openvino.Type; got "
            f"{type(output_type).__name__} {show(output_type)}"
        )
        raise TypeError(msg)
    name = _OUTPUT_TYPES.get(output_type)
    if name is not None:
        return name
    if output_type in _REFUSED_TYPES:
        msg = (
            f"output_type={show(output_type)} is a packed, 8-bit float or "
            f"non-numeric OpenVINO type that eyelike does not produce; "
            f"allowed: {_ALLOWED_TYPES}"
        )
    else:
        msg = (
            f"output_type={show(output_type)} is not an OpenVINO element type "
            f"name eyelike knows; allowed: {_ALLOWED_TYPES}"
        )
    raise TypeError(msg)


def _is_array(value: Any) -> bool:
    if isinstance(value, (type, ModuleType)):  # np.float32 has a .shape too
        return False
    return hasattr(value, "shape") and not isinstance(value, np.generic)


def _check_values(value: Any, name: str) -> None:
    if holds_no_values(value):
        msg = f"{name} must hold a value; got a meta tensor {show(value)}"
        raise TypeError(msg)


def _check_t_num(dtype: Any, name: str) -> None:
    dtype_name = _dtypes.dtype_name(dtype)
    if dtype_name not in _T_NUM:
        kind = "a bool" if dtype_name == "bool" else f"dtype {dtype}"
        msg = f"{name} must be of type int32 or int64 (Eye-9's T_NUM); got {kind}"
        raise TypeError(msg)


def _scalar(value: Any, name: str) -> tuple[int, Any]:
    """A scalar input's value and the array it came from (None if not one)."""
    if isinstance(value, (bool, np.bool_)):
        msg = f"{name} must be an integer, not a bool; got {show(value)}"
        raise TypeError(msg)
    if isinstance(value, int):
        return int(value), None
    if is_time(value):
        msg = f"{name} must be an int32/int64 integer; got {show(value)}"
        raise TypeError(msg)
    if isinstance(value, np.generic):
        _check_t_num(value.dtype, name)
        return int(value), None
    if not _is_array(value):
        msg = (
            f"{name} must be a Python int, or a 0-D or 1-element 1-D int32/int64 "
            f"array; got {type(value).__name__} {show(value)}"
        )
        raise TypeError(msg)
    backend_of_array(value, name)
    _check_values(value, name)
    _check_t_num(value.dtype, name)
    shape = tuple(value.shape)
    if shape not in ((), (1,)):
        msg = (
            f"{name} must be a scalar or a 1-D array of exactly 1 element; "
            f"got shape {shape}"
        )
        raise ValueError(msg)
    return int(value if not shape else value[0]), value


def _batch(batch_shape: Any) -> tuple[tuple[int, ...], Any]:
    """``batch_shape`` as a tuple of counts, and the array it came from."""
    if batch_shape is None:
        return (), None
    if isinstance(batch_shape, (list, tuple)):
        items: Sequence[Any] = batch_shape
        source = None
    elif _is_array(batch_shape):
        backend_of_array(batch_shape, "batch_shape")
        _check_values(batch_shape, "batch_shape")
        _check_t_num(batch_shape.dtype, "batch_shape")
        shape = tuple(batch_shape.shape)
        if len(shape) != 1:
            msg = f"batch_shape must be a 1-D array; got shape {shape}"
            raise ValueError(msg)
        if not isinstance(shape[0], int):  # a lazy array of unknown size
            msg = (
                f"batch_shape must have a known shape; got {shape} (for Dask, "
                "call batch_shape.compute_chunk_sizes() first)"
            )
            raise ValueError(msg)
        items = [int(batch_shape[i]) for i in range(shape[0])]
        source = batch_shape
    else:
        msg = (
            f"batch_shape must be None, a 1-D int32/int64 array or a sequence "
            f"of non-negative ints; got {type(batch_shape).__name__} "
            f"{show(batch_shape)}"
        )
        raise TypeError(msg)
    dims = []
    for i, item in enumerate(items):
        if not is_integer_scalar(item):
            msg = (
                f"batch_shape[{i}] must be a non-negative int; got "
                f"{type(item).__name__} {show(item)}"
            )
            raise TypeError(msg)
        dims.append(within_int64(int(item), f"batch_shape[{i}]", "fit in int64"))
    return tuple(dims), source


def _placement(named_arrays: dict[str, Any]) -> tuple[Backend, Any, Any]:
    """The backend, device and namespace of the array inputs, all one; the
    default's (NumPy's) if there are none."""
    arrays = {n: a for n, a in named_arrays.items() if a is not None}
    if not arrays:
        return DEFAULT, None, None
    backends = {n: backend_of_array(a, n) for n, a in arrays.items()}
    if len(set(backends.values())) > 1:
        listing = ", ".join(f"{n}: {b.name}" for n, b in backends.items())
        msg = f"array inputs must all come from one namespace; got {listing}"
        raise TypeError(msg)
    backend = next(iter(backends.values()))
    devices = {n: backend.device_of(a) for n, a in arrays.items()}
    first_name, first = next(iter(devices.items()))
    for n, dev in devices.items():
        if dev != first:
            msg = (
                f"array inputs must be on one device; {first_name} is on "
                f"{first} but {n} is on {dev}"
            )
            raise ValueError(msg)
    return backend, first, array_namespace(*arrays.values())
