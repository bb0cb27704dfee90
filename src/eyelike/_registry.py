"""The registry of backends, and recognising which one an array or ``xp``
belongs to. Adding a library is one module and one line in `BACKENDS`."""

from __future__ import annotations

import functools
import threading
from types import ModuleType
from typing import Any

import numpy as np
from array_api_compat import array_namespace, is_array_api_obj

from ._array_api_strict import ArrayApiStrictBackend
from ._backend import Backend
from ._cupy import CuPyBackend
from ._dask import DaskBackend
from ._generic import GenericBackend
from ._jax import JaxBackend
from ._numpy import NumPyBackend
from ._torch import TorchBackend

__all__ = ["BACKENDS", "NUMPY", "backend_of_array", "backend_of_namespace"]

# Tried in order; the first that recognises a namespace serves it. The
# generic path comes last: it takes any namespace with the inspection API.
BACKENDS: tuple[type[Backend], ...] = (
    NumPyBackend,
    CuPyBackend,
    TorchBackend,
    DaskBackend,
    JaxBackend,
    ArrayApiStrictBackend,
    GenericBackend,
)

NUMPY: Backend = NumPyBackend(np, np)


def backend_of_namespace(xp: Any) -> Backend:
    """The backend for a caller's ``xp=`` (None: NumPy).

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
def _recognise(xp: ModuleType) -> Backend:
    for cls in BACKENDS:
        if cls.recognises(xp):
            # One instance per library, whichever of its modules named it
            # (``cupy`` and ``array_api_compat.cupy`` alike), so backends
            # compare by identity.
            return NUMPY if cls is NumPyBackend else _instance(cls, xp)
    msg = (
        f"xp must be an array namespace such as numpy, cupy, torch, jax.numpy, "
        f"dask.array or array_api_strict; got {xp!r}"
    )
    raise TypeError(msg)


_INSTANCES: dict[Any, Backend] = {}
_INSTANCES_LOCK = threading.Lock()


def _instance(cls: type[Backend], xp: ModuleType) -> Backend:
    # The generic path gets one instance per namespace; the others one each.
    # Under a lock: two threads meeting a library first must share one.
    key = (cls, xp) if cls is GenericBackend else cls
    with _INSTANCES_LOCK:
        if key not in _INSTANCES:
            _INSTANCES[key] = cls.for_namespace(xp)
        return _INSTANCES[key]


# Array type -> its backend, once recognised: finding the namespace of an
# array costs more than the whole of a small torch call otherwise.
_BY_ARRAY_TYPE: dict[type, Backend] = {np.ndarray: NUMPY}
_BY_ARRAY_TYPE_LIMIT = 64


def backend_of_array(x: Any, name: str = "x") -> Backend:
    """The backend of an array ``x`` (``name`` is for errors)."""
    found = _BY_ARRAY_TYPE.get(type(x))
    if found is not None:
        return found
    if (
        isinstance(x, (type, ModuleType))
        or not is_array_api_obj(x)
        or isinstance(x, np.generic)
    ):
        msg = f"{name} must be an array; got {type(x).__name__} {x!r:.80}"
        raise TypeError(msg)
    backend = backend_of_namespace(array_namespace(x))
    if len(_BY_ARRAY_TYPE) < _BY_ARRAY_TYPE_LIMIT:
        _BY_ARRAY_TYPE[type(x)] = backend
    return backend
