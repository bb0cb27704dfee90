"""The registry of backends, and recognising which one an array or ``xp``
belongs to. Adding a library is one module and one line in `BACKENDS`."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
from array_api_compat import array_namespace, is_array_api_obj

from .._validate.text import show
from ._base import Backend
from .array_api_strict import ArrayApiStrictBackend
from .cupy import CuPyBackend
from .dask import DaskBackend
from .generic import GenericBackend
from .jax import JaxBackend
from .numpy import BACKEND as NUMPY_BACKEND
from .numpy import NumPyBackend
from .torch import TorchBackend

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

# The backends that know their arrays and namespace by name, without
# probing or a table: torch's compiler guards every compiled call on whatever
# its tracing read, so the fewer objects read the cheaper each call.
_OWNERS: tuple[type[TorchBackend], ...] = (TorchBackend,)

NUMPY: Backend = NUMPY_BACKEND


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
            f"torch, jax.numpy, dask.array, array_api_strict); got {show(xp)}"
        )
        raise TypeError(msg)
    for cls in _OWNERS:  # known by name: no table read (see backend_of_array)
        if cls.recognises(xp):
            return _instance(cls, xp)
    found = _BY_NAMESPACE.get(xp.__name__)
    if found is None:
        found = _recognise(xp)
        if len(_BY_NAMESPACE) < _BY_NAMESPACE_LIMIT:
            _BY_NAMESPACE[xp.__name__] = found
    return found


# Namespace module's name (unique in sys.modules) -> its backend, once
# recognised. A plain dict keyed by name: torch's compiler warns about
# functools' caches and cannot compare modules as keys.
_BY_NAMESPACE: dict[str, Backend] = {}
_BY_NAMESPACE_LIMIT = 64


def _recognise(xp: ModuleType) -> Backend:
    for cls in BACKENDS:
        if cls.recognises(xp):
            # One instance per library, whichever of its modules named it
            # (``cupy`` and ``array_api_compat.cupy`` alike), so backends
            # compare by identity.
            return _instance(cls, xp)
    msg = (
        f"xp must be an array namespace such as numpy, cupy, torch, jax.numpy, "
        f"dask.array or array_api_strict; got {show(xp)}"
    )
    raise TypeError(msg)


_GENERIC_INSTANCES: dict[str, Backend] = {}


def _instance(cls: type[Backend], xp: ModuleType | None) -> Backend:
    """The one instance of ``cls`` (of the generic path: one per namespace).

    Two threads meeting a library first may both build one, but
    ``setdefault`` is atomic: both get the one stored. (No lock: torch's
    compiler cannot trace one.) A library's instance is kept on its class,
    read by torch's compiler as one attribute rather than a table entry.
    """
    if cls is GenericBackend:
        assert xp is not None
        found = _GENERIC_INSTANCES.get(xp.__name__)
        if found is None:
            found = _GENERIC_INSTANCES.setdefault(xp.__name__, cls.for_namespace(xp))
        return found
    found = cls.shared_instance
    if found is None:
        found = cls.shared_instance = cls.for_namespace(xp)
    return found


# Array type -> its backend, once recognised: finding the namespace of an
# array costs more than the whole of a small torch call otherwise.
_BY_ARRAY_TYPE: dict[type, Backend] = {}
_BY_ARRAY_TYPE_LIMIT = 64


def backend_of_array(x: Any, name: str = "x") -> Backend:
    """The backend of an array ``x`` (``name`` is for errors)."""
    # Torch and NumPy first, with no lookup in a mutable table: torch's
    # compiler guards every compiled call on whatever tracing read (so
    # torch's tensors do not even reach the NumPy check).
    for cls in _OWNERS:
        if cls.owns_array_type(type(x)):
            return cls.shared_instance or _instance(cls, None)
    if type(x) is np.ndarray:
        return NUMPY
    found = _BY_ARRAY_TYPE.get(type(x))
    if found is not None:
        return found
    if (
        isinstance(x, (type, ModuleType))
        or not is_array_api_obj(x)
        or isinstance(x, np.generic)
    ):
        msg = f"{name} must be an array; got {type(x).__name__} {show(x)}"
        raise TypeError(msg)
    backend = backend_of_namespace(array_namespace(x))
    if len(_BY_ARRAY_TYPE) < _BY_ARRAY_TYPE_LIMIT:
        _BY_ARRAY_TYPE[type(x)] = backend
    return backend
