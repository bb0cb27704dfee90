"""The one import point for array-api-compat, and namespace recognition.

Every other module asks this one which library an array or a namespace
belongs to, so the rules (and their caching) live in one place.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
from array_api_compat import (
    array_namespace,
    device,
    is_array_api_obj,
    is_array_api_strict_namespace,
    is_cupy_namespace,
    is_dask_namespace,
    is_jax_namespace,
    is_numpy_namespace,
    is_torch_namespace,
)

__all__ = [
    "Namespace",
    "array_namespace",
    "device",
    "is_array_api_obj",
    "namespace_of",
    "namespace_of_module",
]


@dataclass(frozen=True)
class Namespace:
    """A recognised array library.

    Attributes
    ----------
    kind
        ``"numpy"``, ``"cupy"``, ``"torch"``, ``"jax"``, ``"dask"``,
        ``"array_api_strict"`` or ``"other"``.
    xp
        A namespace that follows the Array API standard (array-api-compat's
        wrapper where the library itself does not).
    native
        The library's own module, where its dtype objects live.
    """

    kind: str
    xp: Any
    native: Any

    @property
    def mutable(self) -> bool:
        """Whether arrays of this library can be written in place."""
        return self.kind not in ("jax", "dask")


def _compat(name: str) -> ModuleType:
    return importlib.import_module(f"array_api_compat.{name}")


NUMPY = Namespace("numpy", np, np)


def namespace_of_module(xp: Any) -> Namespace:
    """Recognise the namespace a caller passed as ``xp=``.

    Raises
    ------
    TypeError
        If ``xp`` is not an array namespace.
    """
    if xp is None or xp is np:
        return NUMPY
    if not isinstance(xp, ModuleType):
        msg = (
            f"xp must be an array namespace (a module such as numpy, cupy, "
            f"torch, jax.numpy, dask.array, array_api_strict); got {xp!r:.80}"
        )
        raise TypeError(msg)
    return _recognise(xp)


@functools.lru_cache(maxsize=64)
def _recognise(xp: ModuleType) -> Namespace:
    if is_numpy_namespace(xp):
        return NUMPY
    if is_cupy_namespace(xp):
        return Namespace("cupy", _compat("cupy"), importlib.import_module("cupy"))
    if is_torch_namespace(xp):
        return Namespace("torch", _compat("torch"), importlib.import_module("torch"))
    if is_dask_namespace(xp):
        return Namespace(
            "dask", _compat("dask.array"), importlib.import_module("dask.array")
        )
    if is_jax_namespace(xp):
        jnp = importlib.import_module("jax.numpy")
        return Namespace("jax", jnp, jnp)
    if is_array_api_strict_namespace(xp):
        return Namespace("array_api_strict", xp, xp)
    if isinstance(xp, ModuleType) and hasattr(xp, "__array_namespace_info__"):
        return Namespace("other", xp, xp)
    msg = (
        f"xp must be an array namespace such as numpy, cupy, torch, jax.numpy, "
        f"dask.array or array_api_strict; got {xp!r}"
    )
    raise TypeError(msg)


def namespace_of(x: Any, name: str = "x") -> Namespace:
    """Recognise the namespace of an array ``x`` (``name`` is for errors)."""
    # Cheap exact check first: NumPy arrays are by far the common case.
    if type(x) is np.ndarray:
        return NUMPY
    if (
        isinstance(x, (type, ModuleType))
        or not is_array_api_obj(x)
        or isinstance(x, np.generic)
    ):
        msg = f"{name} must be an array; got {type(x).__name__} {x!r:.80}"
        raise TypeError(msg)
    return namespace_of_module(array_namespace(x))
