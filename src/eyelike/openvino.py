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

import numpy as np
from array_api_compat import array_namespace

from . import _core
from ._backends import DEFAULT, backend_of_array
from ._validate.dtypes import DTypeError, dtype_name
from ._validate.integers import batch_shape as read_batch_shape
from ._validate.integers import (
    dimension,
    holds_no_values,
    index_or_none,
    is_array,
    is_integer_scalar,
    is_masked,
    is_symbolic,
    is_time,
    not_an_integer,
    signed_int64,
    within_int64,
)
from ._validate.text import show, show_typed

if TYPE_CHECKING:
    import numpy.typing as npt

    from ._backends._base import Backend
    from ._typing import ArrayT, NoArray, ShapedT, Tensor

    # The inputs that choose no namespace: a count or index as a Python int
    # or a NumPy integer scalar, a batch shape as a list or tuple of them.
    _Int: TypeAlias = int | np.integer[Any]
    _Dims: TypeAlias = list[Any] | tuple[Any, ...] | None
    _Arrays: TypeAlias = dict[str, tuple[Any, Backend]]

__all__ = ["eye"]


# The result's type: the array inputs' (one namespace at run time), or a
# NumPy array where there are none. A torch tensor gives a plain tensor;
# another library's array subclass is typed as itself (the result is the
# library's base array type). The output type's dtype is not typed.
@overload
def eye(  # pyright: ignore[reportOverlappingOverload]
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
def eye(  # pyright: ignore[reportOverlappingOverload]
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
    standard = _output_dtype_name(output_type)
    arrays: _Arrays = {}  # the array inputs, by name, and their backends
    rows = dimension(_scalar(num_rows, "num_rows", arrays), "num_rows")
    cols = dimension(_scalar(num_columns, "num_columns", arrays), "num_columns")
    k = _scalar(diagonal_index, "diagonal_index", arrays)
    if type(k) is int:
        signed_int64(k, "diagonal_index", "Eye-9's T_NUM")
    else:  # (an int32 or int64 array's value always fits)
        k = _offset(k)
    batch = _batch(batch_shape, arrays)
    backend, dev, xp = _placement(arrays)
    try:
        dtype, _ = backend.dtype(standard, dev)
    except DTypeError as exc:
        msg = f"output_type={show(output_type)} ({standard}) is not available: {exc}"
        raise DTypeError(msg) from None
    return _core.eye(rows, cols, k=k, batch_shape=batch, dtype=dtype, device=dev, xp=xp)


# OpenVINO element type name -> standard dtype name, for every type produced.
_OUTPUT_TYPES = {
    "boolean": "bool", "bf16": "bfloat16", "f16": "float16", "f32": "float32",
    "f64": "float64", "i8": "int8", "i16": "int16", "i32": "int32",
    "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32",
    "u64": "uint64",
}  # fmt: skip
# OpenVINO element types that are packed, 8-bit float or not numeric: refused.
_REFUSED_TYPES = frozenset({
    "u1", "u2", "u3", "u4", "u6", "i4", "nf4", "f4e2m1", "f8e4m3", "f8e5m2",
    "f8e8m0", "string", "dynamic", "undefined",
})  # fmt: skip
_ALLOWED_TYPES = ", ".join(_OUTPUT_TYPES)


def _output_dtype_name(output_type: Any) -> str:
    """The standard dtype name for an OpenVINO element type, given by name
    or as an ``openvino.Type`` (known by its class, importing no OpenVINO)."""
    cls = type(output_type)
    if cls.__name__ == "Type" and cls.__module__.partition(".")[0] == "openvino":
        output_type = output_type.get_type_name()  # "f32", "boolean", ...
    if not isinstance(output_type, str):
        msg = (
            f"output_type must be an OpenVINO element type name (one of "
            f"{_ALLOWED_TYPES}) or an openvino.Type; got {show_typed(output_type)}"
        )
        raise TypeError(msg)
    name = _OUTPUT_TYPES.get(output_type)
    if name is not None:
        return name
    why = (
        "is a packed, 8-bit float or non-numeric OpenVINO type that eyelike "
        "does not produce"
        if output_type in _REFUSED_TYPES
        else "is not an OpenVINO element type name eyelike knows"
    )
    msg = f"output_type={show(output_type)} {why}; allowed: {_ALLOWED_TYPES}"
    raise TypeError(msg)


def _check_t_num(dtype: Any, name: str) -> None:
    found = dtype_name(dtype)
    if found not in ("int32", "int64"):
        kind = "a bool" if found == "bool" else f"dtype {dtype}"
        msg = f"{name} must be of type int32 or int64 (Eye-9's T_NUM); got {kind}"
        raise TypeError(msg)


def _array(value: Any, name: str, arrays: _Arrays) -> tuple[Any, ...]:
    """An array input's shape, once its library, values and dtype are checked;
    the array is added to ``arrays``."""
    backend = backend_of_array(value, name)
    arrays[name] = (value, backend)
    if holds_no_values(value):
        msg = f"{name} must hold a value; got a meta tensor {show(value)}"
        raise TypeError(msg)
    if is_masked(value):
        raise not_an_integer(value, f"{name} must hold int32/int64 values")
    _check_t_num(value.dtype, name)
    return tuple(backend.shape_of(value, name))


def _scalar(value: Any, name: str, arrays: _Arrays) -> Any:
    """A ``T_NUM`` input's one value, its type checked: a Python int, a NumPy
    integer, or a 0-D array (a 1-element one's element). An array's is not
    read here: a count is read by `eyelike.eye`'s rule (under
    torch.compile, a size known when the program runs; under jax.jit,
    refused naming it, as XLA's shapes are static), and an index is
    ``eye``'s per-matrix ``k`` (traced, under jit too)."""
    if isinstance(value, (bool, np.bool_)):
        msg = f"{name} must be an integer, not a bool; got {show(value)}"
        raise TypeError(msg)
    if isinstance(value, int):
        return int(value)
    if is_time(value):
        msg = f"{name} must be an int32/int64 integer; got {show(value)}"
        raise TypeError(msg)
    if isinstance(value, np.generic):
        _check_t_num(value.dtype, name)
        return int(value)
    if not is_array(value):
        msg = (
            f"{name} must be a Python int, or a 0-D or 1-element 1-D int32/int64 "
            f"array; got {show_typed(value)}"
        )
        raise TypeError(msg)
    shape = _array(value, name, arrays)
    if shape not in ((), (1,)):
        msg = (
            f"{name} must be a scalar or a 1-D array of exactly 1 element; "
            f"got shape {shape}"
        )
        raise ValueError(msg)
    return value[0] if shape else value


def _offset(value: Any) -> Any:
    """An array ``diagonal_index``'s value, where it holds one now; else
    (traced, under jax.jit, jax.vmap or torch.func.vmap) the array itself,
    `eyelike.eye`'s array ``k``."""
    try:
        found = index_or_none(value)
    except RuntimeError:  # (torch.func.vmap's batched tensor: one per batch)
        return value
    return value if found is None or is_symbolic(found) else found


def _batch(batch_shape: Any, arrays: _Arrays) -> tuple[int, ...]:
    """``batch_shape`` as a tuple of counts."""
    if batch_shape is None:
        return ()
    if is_array(batch_shape):
        shape = _array(batch_shape, "batch_shape", arrays)
        if len(shape) != 1:
            msg = f"batch_shape must be a 1-D array; got shape {shape}"
            raise ValueError(msg)
        # Read by `eyelike.eye`'s rule (a lazy one of unknown size refused;
        # under torch.export, sizes known when the program runs).
        return read_batch_shape(batch_shape)
    if not isinstance(batch_shape, (list, tuple)):
        msg = (
            f"batch_shape must be None, a 1-D int32/int64 array or a sequence "
            f"of non-negative ints; got {show_typed(batch_shape)}"
        )
        raise TypeError(msg)
    dims = []
    for i, item in enumerate(batch_shape):
        if not is_integer_scalar(item):
            msg = f"batch_shape[{i}] must be a non-negative int; got {show_typed(item)}"
            raise TypeError(msg)
        dims.append(within_int64(int(item), f"batch_shape[{i}]"))
    return tuple(dims)


def _placement(arrays: _Arrays) -> tuple[Backend, Any, Any]:
    """The backend, device and namespace of the array inputs, all one; the
    default's (NumPy's) if there are none."""
    if not arrays:
        return DEFAULT, None, None
    if len({backend for _, backend in arrays.values()}) > 1:
        listing = ", ".join(f"{n}: {b.name}" for n, (_, b) in arrays.items())
        msg = f"array inputs must all come from one namespace; got {listing}"
        raise TypeError(msg)
    (first_name, (first, backend)), *others = arrays.items()
    dev = backend.device_of(first)
    for name, (array, _) in others:
        if not backend._same_device(backend.device_of(array), dev):
            msg = (
                f"array inputs must be on one device; {first_name} is on "
                f"{dev} but {name} is on {backend.device_of(array)}"
            )
            raise ValueError(msg)
    return backend, dev, array_namespace(*(a for a, _ in arrays.values()))
