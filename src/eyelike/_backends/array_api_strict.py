"""The array-api-strict backend: the standard's reference namespace."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate.dtypes import DTypeError
from .._validate.text import show
from ._base import Backend

__all__ = ["ArrayApiStrictBackend"]


class ArrayApiStrictBackend(Backend):
    """array-api-strict: host memory, named devices, the standard's dtypes."""

    name = "array_api_strict"
    namespaces = ("array_api_strict",)
    takes = frozenset({"out"})

    def device(self, device: Any) -> Any:
        devices = self._xp.__array_namespace_info__().devices()
        if device not in devices:
            msg = f"device {show(device)} is not one of {devices}"
            raise ValueError(msg)
        return device

    def _on_host(self, device: Any) -> bool:
        return True

    def dtype(self, dtype: Any, device: Any) -> tuple[Any, int]:
        # Its own rule, which its users rely on to catch non-portable code:
        # Python's built-in types are no dtypes of the standard.
        for python_type, name in _PYTHON_TYPES:
            if dtype is python_type:
                msg = (
                    f"dtype {python_type.__name__}: array_api_strict takes no "
                    f"Python type as a dtype (the standard has none); use "
                    f"array_api_strict.{name} or the name {name!r}"
                )
                raise DTypeError(msg)
        return super().dtype(dtype, device)

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        # bfloat16 has no DLPack code NumPy reads; its buffer converts.
        return np.asarray(x) if "bfloat" in str(x.dtype) else np.from_dlpack(x)


# Python's types, and the standard dtype each stands for elsewhere.
_PYTHON_TYPES = (
    (bool, "bool"),
    (int, "int64"),
    (float, "float64"),
    (complex, "complex128"),
)
