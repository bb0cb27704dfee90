"""The registry: the one way to get a backend, by namespace or by array
class, each looked up once and then cached. Each library's backend exists
from import, and a torch namespace or tensor is found before any table is
read: under torch.compile this code is traced too, and keeps the guard
rules at the top of ``torch/__init__.py``.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import numpy as np
from array_api_compat import array_namespace, is_array_api_obj

from .._validate.text import show
from ._base import Backend
from .array_api_strict import ArrayApiStrictBackend
from .cubed import CubedBackend
from .cupy import CuPyBackend
from .dask import DaskBackend
from .generic import GenericBackend
from .jax import JaxBackend
from .numpy import NumPyBackend
from .torch import TORCH, TorchBackend, is_tensor_type

__all__ = [
    "BACKENDS",
    "DEFAULT",
    "backend_of_array",
    "backend_of_namespace",
    "same_library",
]

# Every library eyelike has a module for (any other namespace: `GenericBackend`).
BACKENDS: tuple[type[Backend], ...] = (
    NumPyBackend,
    CuPyBackend,
    TorchBackend,
    DaskBackend,
    CubedBackend,
    JaxBackend,
    ArrayApiStrictBackend,
)

# One instance per library, made here (backends compare by identity), by
# the names of its namespace modules.
_LIBRARIES: dict[str, Backend] = {
    name: backend
    for backend in (TORCH if cls is TorchBackend else cls() for cls in BACKENDS)
    for name in backend.namespaces
}
# The default namespace's backend (no ``xp``, ``out`` or ``x`` to say).
DEFAULT: Backend = _LIBRARIES["numpy"]
# Namespace module name -> the module and its backend, once found (a
# namespace made anew under a name, as marray's are, replaces the one before).
_BY_MODULE: dict[str, tuple[ModuleType, Backend]] = {}
# Array class -> its backend, once recognised: finding the namespace of an
# array costs more than the whole of a small call otherwise.
_BY_ARRAY_TYPE: dict[type, Backend] = {np.ndarray: DEFAULT}
_BY_ARRAY_TYPE_LIMIT = 64
_NDARRAY = np.ndarray  # one name (guard rule 3)
_TORCH_NAMES = TorchBackend.namespaces


def backend_of_namespace(xp: Any) -> Backend:
    """The backend for a caller's ``xp=`` (None: the default, NumPy);
    TypeError where ``xp`` is no array namespace."""
    if xp is None or xp is np:
        return DEFAULT
    if not isinstance(xp, ModuleType):
        raise _not_a_namespace(xp)
    name = xp.__name__
    if name in _TORCH_NAMES:
        return TORCH
    found = _BY_MODULE.get(name)
    if found is None or found[0] is not xp:
        # (Two threads meeting a namespace first may each make a backend:
        # both work, as `same_library` compares namespaces, not backends.)
        found = _BY_MODULE[name] = (xp, _find(xp))
    return found[1]


def _find(xp: ModuleType) -> Backend:
    """The backend of a namespace module met first: its library's, where it
    is the library's own module; else, told by the type of an array it makes
    (a vendored array-api-compat, as scikit-learn's; marray's over torch,
    named "...array_api_compat.torch"), a library's or the generic path's."""
    name = xp.__name__
    if name in _LIBRARIES and sys.modules.get(name) is xp:
        return _LIBRARIES[name]
    if not (
        hasattr(xp, "__array_namespace_info__") or hasattr(xp, "__array_api_version__")
    ):
        raise _not_a_namespace(xp)
    try:
        owner = array_namespace(xp.asarray(0))
    except Exception:  # no asarray, or one that fails: the generic path's rules
        owner = xp
    name = owner.__name__
    if owner is not xp and sys.modules.get(name) is owner and name in _LIBRARIES:
        return backend_of_namespace(owner)
    return GenericBackend(xp)


def _not_a_namespace(xp: Any) -> TypeError:
    """The error for an ``xp`` that is no array namespace."""
    return TypeError(
        f"xp must be an array namespace (a module such as numpy, cupy, "
        f"torch, jax.numpy, dask.array, array_api_strict); got {show(xp)}"
    )


def _not_an_array(x: Any, name: str) -> TypeError:
    return TypeError(f"{name} must be an array; got {type(x).__name__} {show(x)}")


def same_library(one: Backend, other: Backend) -> bool:
    """Whether two backends are of one namespace: the same library's, or the
    generic path's of one module (two may be made for it, by two threads)."""
    return one is other or one._xp is other._xp


def backend_of_array(x: Any, name: str = "x") -> Backend:
    """The backend of an array ``x``; TypeError, naming ``name``, where ``x``
    is no array of an Array API namespace."""
    cls = type(x)
    if cls is _NDARRAY:
        return DEFAULT
    if is_tensor_type(cls):
        return TORCH
    found = _BY_ARRAY_TYPE.get(cls)
    if found is not None:
        return found
    if (
        isinstance(x, (type, ModuleType))
        or not is_array_api_obj(x)
        or isinstance(x, np.generic)
    ):
        raise _not_an_array(x, name)
    try:
        backend = backend_of_namespace(array_namespace(x))
    except TypeError:  # one that only looks like an array (torch.fx's Proxy:
        raise _not_an_array(x, name) from None  # no namespace, or a Proxy as one)
    if len(_BY_ARRAY_TYPE) < _BY_ARRAY_TYPE_LIMIT:
        _BY_ARRAY_TYPE[cls] = backend
    return backend
