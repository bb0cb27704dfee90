"""The array libraries the fuzz tests use, and what the strategies and the
oracle both need to know about them: their dtype tables and default dtypes,
item sizes, and which library an array belongs to.

Every library is optional here, so that the fuzz modules import wherever
NumPy does; the dev and CI environments install all of them.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np


def optional(name: str) -> Any:
    """The module ``name``, or None where it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:  # pragma: no cover - every test backend is installed
        return None


torch: Any = optional("torch")
jnp: Any = optional("jax.numpy")
xs: Any = optional("array_api_strict")
da: Any = optional("dask.array")
ml_dtypes: Any = optional("ml_dtypes")

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

# The namespaces a fuzzed call is made on, NumPy weighted as the main one.
# Dask is reached through hostile ``xp`` values only: its outputs are lazy.
NS_NAMES = ["numpy"] * 3 + [
    n
    for n, m in (("torch", torch), ("jax", jnp), ("array_api_strict", xs))
    if m is not None
]

# dtype tables of each namespace, from the namespaces' own inspection API.
STANDARD = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16"]
STANDARD += ["uint32", "uint64", "float32", "float64", "complex64", "complex128"]
ITEMSIZE = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2}
ITEMSIZE |= {"float16": 2, "bfloat16": 2, "int32": 4, "uint32": 4, "float32": 4}
ITEMSIZE |= {"int64": 8, "uint64": 8, "float64": 8, "complex64": 8}
ITEMSIZE |= {"complex128": 16}
HOST = frozenset({"numpy", "torch", "jax", "array_api_strict"})  # all on the CPU


def module_of(ns: str) -> Any:
    """The module a namespace name stands for (what ``xp=`` takes)."""
    return {
        "numpy": np,
        "torch": torch,
        "jax": jnp,
        "array_api_strict": xs,
        "dask": da,
    }[ns]


def module_prefix(ns: str) -> tuple[str, ...]:
    """The module names an array of namespace ``ns`` has as its type's."""
    return {
        "numpy": ("numpy",),
        "torch": ("torch",),
        "jax": ("jax", "jaxlib"),
        "array_api_strict": ("array_api_strict",),
        "dask": ("dask",),
    }[ns]


def native_dtypes(ns: str, device: Any = None) -> dict[str, Any]:
    """Name -> dtype object of every numeric dtype ``ns`` has."""
    if ns == "torch":
        names = [*STANDARD, "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"]
        names += ["float8_e4m3fnuz", "float8_e5m2fnuz"]
        return {n: getattr(torch, n) for n in names if hasattr(torch, n)}
    info = module_of(ns).__array_namespace_info__()
    table = dict(info.dtypes(device=device, kind=("bool", "numeric")))
    if ns == "jax":
        table |= {"float16": jnp.float16, "bfloat16": jnp.bfloat16}
        # Every float8 type jnp offers, as jnp.eye takes them (e8m0fnu has
        # no zero, so it is refused all the same).
        float8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz"]
        float8 += ["float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e3m4"]
        float8 += ["float8_e4m3"]
        table |= {n: getattr(jnp, n) for n in float8 if hasattr(jnp, n)}
    return table


def has_dtype(ns: str, name: str) -> bool:
    """Whether namespace ``ns`` can make an output of dtype ``name``."""
    if ns in ("numpy", "dask"):  # every NumPy type, and ml_dtypes' bfloat16
        return name in (*STANDARD, "float16", "bfloat16")
    return name in native_dtypes(ns)


def dtype_name(dtype: Any) -> str:
    """``float32`` for ``np.float32``, ``torch.float32``, strict's float32..."""
    if isinstance(dtype, np.dtype):
        return str(dtype.name)
    return str(dtype).rsplit(".", 1)[-1]


def default_dtype(ns: str, device: Any = None) -> Any:
    """The namespace's default floating dtype: a NumPy dtype, else a name."""
    if ns in ("numpy", "dask"):
        return np.dtype(np.float64)
    if ns == "torch":
        return "float32"
    info = module_of(ns).__array_namespace_info__()
    return dtype_name(info.default_dtypes(device=device)["real floating"])


def kind_of(v: Any) -> str | None:
    """Which array library ``v`` belongs to (by its type's module), or None."""
    if isinstance(v, (np.generic, type)) or not hasattr(v, "shape"):
        return None
    if isinstance(v, np.ndarray):
        return "numpy"
    module = type(v).__module__.partition(".")[0]
    return {
        "torch": "torch",
        "jax": "jax",
        "jaxlib": "jax",
        "array_api_strict": "array_api_strict",
        "dask": "dask",
    }.get(module)


def to_torch(a: np.ndarray[Any, Any]) -> Any:
    """A torch tensor of ``a``'s values (torch takes native byte order only)."""
    native = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("="))
    return torch.from_numpy(native.copy())
