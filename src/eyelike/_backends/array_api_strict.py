"""The array-api-strict backend: the standard's reference namespace."""

from __future__ import annotations

import functools
from typing import Any

from .._validate.dtypes import DTypeError
from .._validate.gate import admit
from ._base import Shape
from .generic import GenericBackend
from .reference import over_batch

__all__ = ["ArrayApiStrictBackend"]


class ArrayApiStrictBackend(GenericBackend):
    """array-api-strict: host memory, named devices, the standard's dtypes."""

    name = "array_api_strict"
    namespaces = ("array_api_strict",)
    takes = frozenset({"out"})
    _host_memory = True

    def dtype(self, dtype: Any, device: Any) -> tuple[Any, int]:
        # Its own rule, which its users rely on to catch non-portable code:
        # Python's built-in types are no dtypes of the standard.
        name = _PYTHON_TYPES.get(dtype) if isinstance(dtype, type) else None
        if name is not None:
            msg = (
                f"dtype {dtype.__name__}: array_api_strict takes no "
                f"Python type as a dtype (the standard has none); use "
                f"array_api_strict.{name} or the name {name!r}"
            )
            raise DTypeError(msg)
        return super().dtype(dtype, device)

    def short_eye(
        self, shape: Shape, k: Any, dtype: Any, like: Any, device: Any, out: Any
    ) -> Any:
        # array_api_strict.eye costs ~6 us, the general path ~3-9 us more: a
        # call the gate lets through, with an int k, one of its own dtypes
        # (or None) on its default device passes every check made there.
        # Built as there: the matrix, copied over the batch. (``like`` and
        # ``out`` are None: no `_short_shape`, no `_short_out`.)
        k = admit(shape, k)
        if type(k) is not int:  # (None: the gate's no)
            return None
        plain = self._plain
        if not (
            (dtype is None or (type(dtype) is plain[0] and dtype in plain[1]))
            and (device is None or (type(device) is plain[2] and device == plain[3]))
        ):
            return None
        xp = self._xp
        matrix = xp.eye(shape[-2], shape[-1], k=k, dtype=dtype, device=device)
        return matrix if len(shape) == 2 else over_batch(xp, matrix, shape)

    @functools.cached_property
    def _plain(self) -> tuple[Any, ...]:
        """The dtype and device classes, the default device's dtypes, and it."""
        default = self._devices()[0]
        dtypes = frozenset(self._dtype_table(None).values())
        return (type(self._xp.float64), dtypes, type(default), default)

    def _devices(self) -> list[Any]:
        # (Before API version 2023.12 it has no inspection API, and one
        # device, its arrays'.)
        return super()._devices() or [self._xp.asarray(0).device]


# Python's types, and the standard dtype each stands for elsewhere.
_PYTHON_TYPES = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}
