"""OpenVINO Eye-9's inputs, read as the operator specifies them: ``T_NUM``
scalars (a Python int, or a 0-D or 1-element int32/int64 array), the 1-D
``batch_shape``, the ``output_type`` element type (by name or as an
``openvino.Type``), and the one namespace the array inputs come from."""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
from array_api_compat import array_namespace

from ._backends import DEFAULT, backend_of_array
from ._backends._base import Backend
from ._validate import dtypes as _dtypes
from ._validate.integers import (
    holds_no_values,
    is_integer_scalar,
    is_time,
    within_int64,
)
from ._validate.text import show

__all__ = ["batch", "output_dtype_name", "placement", "scalar"]


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


def output_dtype_name(output_type: Any) -> str:
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


def scalar(value: Any, name: str) -> tuple[int, Any]:
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


def batch(batch_shape: Any) -> tuple[tuple[int, ...], Any]:
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


def placement(named_arrays: dict[str, Any]) -> tuple[Backend, Any, Any]:
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
