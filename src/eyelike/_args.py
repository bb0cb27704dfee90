"""Validation of every public argument, done before anything is allocated.

Each function returns a normalised value or raises ``TypeError`` /
``ValueError`` with a message that names the parameter, the value and what
is allowed.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import os
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

from ._compat import NUMPY, Namespace, namespace_of
from ._compat import device as device_of

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "MAX_BATCH_DIMS",
    "batch_dims",
    "check_out",
    "check_size",
    "count",
    "dtype_name",
    "is_integer_scalar",
    "offsets",
    "resolve_device",
    "resolve_dtype",
]

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
MAX_BATCH_DIMS = 62  # NumPy's 64 dimensions, less the matrix's two

# The standard's numeric dtypes plus the extras a library may have.
_STANDARD_NAMES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
_EXTRA_NAMES = (
    "float16",
    "bfloat16",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
)
_ITEMSIZE = {
    "bool": 1,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "float16": 2,
    "bfloat16": 2,
    "int32": 4,
    "uint32": 4,
    "float32": 4,
    "int64": 8,
    "uint64": 8,
    "float64": 8,
    "complex64": 8,
    "complex128": 16,
}
# What NumPy's dtype parser raises for text it cannot read.
_DTYPE_PARSE_ERRORS = (TypeError, ValueError, SyntaxError, OverflowError)
# dtypes whose value set has no exact 0 (or no 1): they cannot hold an eye.
_NO_ZERO = frozenset({"float8_e8m0fnu"})
_TORCH_WIDE_UNSIGNED = frozenset({"torch.uint16", "torch.uint32", "torch.uint64"})


def is_integer_scalar(value: Any) -> bool:
    """A Python or NumPy integer, not a bool and not a timedelta64 (which
    NumPy makes an integer subclass, though it is a duration)."""
    if isinstance(value, (bool, np.bool_, np.timedelta64)):
        return False
    return isinstance(value, (int, np.integer))


def _not_data(value: Any) -> bool:
    """A class or module given where a value belongs (e.g. ``np.float32``)."""
    return isinstance(value, (type, ModuleType))


def _is_bool_like(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return True
    dt = getattr(value, "dtype", None)
    return dt is not None and "bool" in str(dt)


def count(value: Any, name: str) -> int:
    """A non-negative dimension: a Python int or any object with ``__index__``."""
    if type(value) is int and 0 <= value <= INT64_MAX:
        return value
    if _is_bool_like(value):
        msg = f"{name} must be a non-negative integer, not a bool; got {value!r}"
        raise TypeError(msg)
    if isinstance(value, (np.timedelta64, np.datetime64)) or _not_data(value):
        msg = f"{name} must be a non-negative integer; got {value!r:.80}"
        raise TypeError(msg)
    try:
        v = operator.index(value)
    except TypeError:
        msg = (
            f"{name} must be a non-negative integer (int or object with "
            f"__index__); got {type(value).__name__} {value!r:.80}"
        )
        raise TypeError(msg) from None
    if v < 0:
        msg = f"{name} must be non-negative; got {v}"
        raise ValueError(msg)
    if v > INT64_MAX:
        msg = f"{name} must be at most 2**63 - 1; got {v}"
        raise ValueError(msg)
    return v


def batch_dims(value: Any, name: str = "batch_shape") -> tuple[int, ...]:
    """``batch_shape`` as a tuple of counts (an int, sequence or 1-D array)."""
    if type(value) is tuple and len(value) <= MAX_BATCH_DIMS:
        # The common spelling, checked without the general machinery below.
        if all(type(v) is int and 0 <= v <= INT64_MAX for v in value):
            return value
    elif type(value) is int and 0 <= value <= INT64_MAX:
        return (value,)
    if (
        isinstance(value, (str, bytes))
        or _not_data(value)
        or (_is_bool_like(value) and not hasattr(value, "shape"))
    ):
        msg = f"{name} must be an int or a sequence of ints; got {value!r:.80}"
        raise TypeError(msg)
    shape = getattr(value, "shape", None)
    if shape is not None:
        if len(shape) == 0:
            return (count(value, name),)
        if len(shape) != 1:
            msg = f"{name} must be 1-D when given as an array; got shape {shape}"
            raise ValueError(msg)
        if _is_bool_like(value):
            msg = f"{name} must hold integers, not bools; got {value!r:.80}"
            raise TypeError(msg)
        if shape[0] > MAX_BATCH_DIMS:
            items = value
        elif hasattr(value, "tolist"):
            items = value.tolist()
        else:  # e.g. array-api-strict: its 0-D entries have __index__
            items = [value[i] for i in range(shape[0])]
    elif isinstance(value, Sequence):
        items = value
    elif hasattr(value, "__index__"):
        return (count(value, name),)
    else:
        msg = f"{name} must be an int or a sequence of ints; got {value!r:.80}"
        raise TypeError(msg)
    if len(items) > MAX_BATCH_DIMS:
        # Checked before reading the entries: a huge range would take hours.
        msg = (
            f"{name} has {len(items)} dimensions; at most {MAX_BATCH_DIMS} "
            f"are supported (NumPy arrays have at most 64 dimensions)"
        )
        raise ValueError(msg)
    return tuple(count(v, f"{name}[{i}]") for i, v in enumerate(items))


# ---------------------------------------------------------------- dtypes


def _parse(spec: Any) -> np.dtype[Any] | None:
    """``np.dtype(spec)``, or None where NumPy cannot read it or only guesses
    (it warns then: an array as a dtype, a deprecated alias such as 'a3')."""
    if isinstance(spec, np.dtype):
        return spec
    if isinstance(spec, str):
        return _parse_text(spec)
    return _parse_guarded(spec)


@functools.lru_cache(maxsize=256)
def _parse_text(spec: str) -> np.dtype[Any] | None:
    # Cached: the warnings filter is process-wide state, so it is swapped
    # once per spelling rather than on every call.
    return _parse_guarded(spec)


def _parse_guarded(spec: Any) -> np.dtype[Any] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            parsed: np.dtype[Any] = np.dtype(spec)
    except (*_DTYPE_PARSE_ERRORS, DeprecationWarning):
        return None
    return parsed


def dtype_name(dtype: Any) -> str | None:
    """The standard name of a dtype given in any form, or None."""
    if isinstance(dtype, str):
        return dtype
    parsed = _parse(dtype)
    if parsed is not None:
        return str(parsed.name)
    # torch.float32, array_api_strict.float32, ...: the name after the dot.
    name = str(dtype).rsplit(".", 1)[-1]
    return name if name in _ITEMSIZE or name in _EXTRA_NAMES else None


@functools.lru_cache(maxsize=256)
def _numpy_dtype_checked(dt: np.dtype[Any]) -> np.dtype[Any]:
    is_ml = dt.type.__module__ == "ml_dtypes"
    if dt.kind not in "biufc" and not is_ml:
        msg = f"dtype must be a numeric or bool dtype; got {dt!r} ({dt.name})"
        raise TypeError(msg)
    if is_ml:
        # Values a narrow format cannot hold exactly make a wrong "identity".
        zero, one = dt.type(0), dt.type(1)
        if dt.name in _NO_ZERO or complex(zero) != 0 or complex(one) != 1:
            msg = f"dtype {dt.name} cannot represent 0 and 1 exactly, so no eye"
            raise TypeError(msg)
    return dt


def _numpy_dtype(dtype: Any, kind: str) -> np.dtype[Any]:
    if dtype is None:
        return np.dtype(np.float64)
    if isinstance(dtype, bool) or (
        hasattr(dtype, "shape") and not isinstance(dtype, (type, np.dtype, np.generic))
    ):
        # NumPy would read an array's (or scalar's) dtype, with a warning.
        msg = f"dtype must be a dtype or dtype name, not a value; got {dtype!r:.80}"
        raise TypeError(msg)
    dt = _parse(dtype)
    if dt is None:
        name = dtype_name(dtype)
        if name is not None:
            try:  # bfloat16, float8_*, int4, ...: ml_dtypes' own names
                import ml_dtypes

                dt = np.dtype(getattr(ml_dtypes, name))
            except (ImportError, AttributeError, TypeError):
                dt = _parse(name)
    if dt is None:
        msg = f"dtype {dtype!r:.80} is not a dtype that {kind} knows"
        raise TypeError(msg)
    dt = _numpy_dtype_checked(dt)
    if kind == "cupy" and (dt.type.__module__ == "ml_dtypes"):
        msg = f"dtype {dt.name} is not supported by CuPy"
        raise TypeError(msg)
    return dt


def _native_table(ns: Namespace, device: Any) -> dict[str, Any]:
    """Name -> dtype object for every numeric dtype ``ns`` offers on ``device``."""
    info = ns.xp.__array_namespace_info__()
    table: dict[str, Any] = dict(info.dtypes(device=device, kind=("bool", "numeric")))
    if ns.kind == "torch":
        # array-api-compat lists only the standard's set; torch has more.
        import torch

        for name in _STANDARD_NAMES + _EXTRA_NAMES:
            dt = getattr(torch, name, None)
            if isinstance(dt, torch.dtype):
                table.setdefault(name, dt)
    elif ns.kind == "jax":
        for name in ("float16", "bfloat16"):
            table.setdefault(name, getattr(ns.native, name))
    return table


def resolve_dtype(dtype: Any, ns: Namespace, device: Any) -> tuple[Any, int]:
    """The namespace's dtype object for ``dtype`` and its item size in bytes."""
    if ns.kind in ("numpy", "cupy", "dask"):
        dt = _numpy_dtype(dtype, ns.kind)
        return dt, dt.itemsize
    if dtype is None:
        info = ns.xp.__array_namespace_info__()
        dtype = info.default_dtypes(device=device)["real floating"]
    table = _native_table(ns, device)
    found = None
    for name, candidate in table.items():
        # Compare like with like only: array-api-strict warns when its dtypes
        # are compared with NumPy's.
        if type(dtype) is type(candidate) and dtype == candidate:
            found = name
            break
    if found is None:
        found = dtype_name(dtype) if not isinstance(dtype, bool) else None
    if found not in table:
        hint = ""
        if ns.kind == "jax" and found in _STANDARD_NAMES:
            hint = " (64-bit types need jax.config.update('jax_enable_x64', True))"
        msg = (
            f"dtype {dtype!r:.80} is not a numeric dtype of {ns.kind} on this "
            f"device{hint}; allowed: {', '.join(sorted(table))}"
        )
        raise TypeError(msg)
    if found in _NO_ZERO:
        msg = f"dtype {found} cannot represent 0 and 1 exactly, so no eye"
        raise TypeError(msg)
    return table[found], _ITEMSIZE.get(found, 1)


# ---------------------------------------------------------------- device


def _torch_has(torch: Any, kind: str) -> bool:
    backend = getattr(torch.backends, kind, None) if kind == "mps" else None
    module = backend or getattr(torch, kind, None)
    check = getattr(module, "is_available", None)
    return bool(check()) if callable(check) else False


def resolve_device(device: Any, ns: Namespace) -> Any:
    """Check ``device`` for ``ns``; returns the value to pass on."""
    if device is None:
        return None
    if ns.kind == "numpy":
        if isinstance(device, str) and device == "cpu":
            return device
        msg = f"device must be None or 'cpu' for NumPy; got {device!r}"
        raise ValueError(msg)
    if ns.kind == "torch":
        import torch

        try:
            dev = torch.device(device)
        except (RuntimeError, TypeError, ValueError):
            msg = f"device {device!r} is not a torch device"
            raise ValueError(msg) from None
        if dev.type not in ("cpu", "meta") and not _torch_has(torch, dev.type):
            msg = f"device {device!r}: this torch build has no {dev.type} device"
            raise ValueError(msg)
        return dev
    if ns.kind == "cupy":
        if (isinstance(device, int) and not isinstance(device, bool)) or hasattr(
            device, "id"
        ):
            import cupy

            return cupy.cuda.Device(getattr(device, "id", device))
        msg = f"device must be a CUDA device id or cupy.cuda.Device; got {device!r}"
        raise ValueError(msg)
    if ns.kind == "jax":
        import jax

        if isinstance(device, str):
            try:  # a platform name: its first device
                return jax.devices(device)[0]
            except RuntimeError:
                msg = f"device {device!r} is not a JAX platform here"
                raise ValueError(msg) from None
        if not isinstance(device, jax.Device):
            msg = f"device must be a jax.Device or platform name; got {device!r}"
            raise ValueError(msg)
        return device
    if ns.kind == "array_api_strict":
        devices = ns.xp.__array_namespace_info__().devices()
        if device not in devices:
            msg = f"device {device!r} is not one of {devices}"
            raise ValueError(msg)
    return device


# ---------------------------------------------------------------- k


def _clamp_int(k: Any, n_rows: int, n_cols: int) -> int:
    if _is_bool_like(k):
        msg = f"k must be an integer or an integer array, not a bool; got {k!r}"
        raise TypeError(msg)
    try:
        v = operator.index(k)
    except TypeError:
        msg = (
            f"k must be an integer or an integer array; got "
            f"{type(k).__name__} {k!r:.80}"
        )
        raise TypeError(msg) from None
    # Every k >= n_cols (or <= -n_rows) gives all zeros: clamping keeps the
    # meaning and makes k fit any index type, so nothing truncates later.
    return min(max(v, -n_rows), n_cols)


def _host_k_array(k: Any) -> np.ndarray[Any, Any]:
    """A NumPy integer (or object-of-int) array from a NumPy array or sequence."""
    if isinstance(k, np.ndarray):
        if k.dtype.kind not in "iu":
            msg = f"k must be an integer array; got dtype {k.dtype}"
            raise TypeError(msg)
        return k
    # dtype=object: NumPy would silently turn [2**63, -1] into floats.
    try:
        arr = np.asarray(k, dtype=object)
    except TypeError:  # an entry NumPy cannot hold at all
        msg = f"k must hold integers only; got {k!r:.80}"
        raise TypeError(msg) from None
    except ValueError:
        msg = f"k must be a rectangular sequence of integers; got {k!r:.80}"
        raise ValueError(msg) from None
    flat = arr.ravel().tolist()
    try:
        arr.ravel()[:] = [_index_leaf(v) for v in flat]
    except TypeError:
        msg = f"k must hold integers only; got {k!r:.80}"
        raise TypeError(msg) from None
    return arr


def _index_leaf(v: Any) -> int:
    """One entry of a ``k`` sequence: an int or object with ``__index__``."""
    if (
        _is_bool_like(v)
        or _not_data(v)
        or isinstance(v, (np.timedelta64, np.datetime64))
    ):
        raise TypeError
    return operator.index(v)


def _clamp_host(arr: np.ndarray[Any, Any], lo: int, hi: int) -> np.ndarray[Any, Any]:
    if arr.dtype == object:
        flat = [min(max(int(v), lo), hi) for v in arr.ravel().tolist()]
        shaped: np.ndarray[Any, Any] = np.reshape(np.array(flat, np.int64), arr.shape)
        return shaped
    info = np.iinfo(arr.dtype)
    clipped: np.ndarray[Any, Any] = np.clip(arr, max(lo, info.min), min(hi, info.max))
    as_int64: np.ndarray[Any, Any] = clipped.astype(np.int64)
    return as_int64


def offsets(
    k: Any, ns: Namespace, batch: tuple[int, ...], n_rows: int, n_cols: int
) -> Any:
    """``k`` clamped into ``[-n_rows, n_cols]``.

    Returns a Python int for a scalar ``k``; for an array ``k`` an integer
    array (NumPy for host data, else ``ns``'s own) whose shape broadcasts to
    ``batch``.
    """
    if type(k) is int:
        return min(max(k, -n_rows), n_cols)
    if _not_data(k) or isinstance(k, (np.timedelta64, np.datetime64)):
        msg = f"k must be an integer or an integer array; got {k!r:.80}"
        raise TypeError(msg)
    is_array = hasattr(k, "shape") and not isinstance(k, np.generic)
    if not is_array and not isinstance(k, (list, tuple)):
        return _clamp_int(k, n_rows, n_cols)
    if isinstance(k, (list, tuple, np.ndarray)):
        arr: Any = _host_k_array(k)
        k_ns = NUMPY
    else:
        k_ns = namespace_of(k, "k")
        if k_ns.kind != ns.kind:
            msg = (
                f"k must be an int, a Python sequence, a NumPy array or a "
                f"{ns.kind} array; got a {k_ns.kind} array"
            )
            raise TypeError(msg)
        if _is_bool_like(k) or not k_ns.xp.isdtype(k.dtype, "integral"):
            msg = f"k must be an integer array; got dtype {k.dtype}"
            raise TypeError(msg)
        arr = k
    shape = tuple(arr.shape)
    try:
        fits = np.broadcast_shapes(shape, batch) == batch
    except ValueError:
        fits = False
    if not fits:
        msg = f"k of shape {shape} does not broadcast to batch_shape {batch}"
        raise ValueError(msg)
    if k_ns is NUMPY:
        clamped_host = _clamp_host(arr, -n_rows, n_cols)
        # A 0-D k is one offset for every matrix: the scalar fast paths.
        return int(clamped_host) if clamped_host.ndim == 0 else clamped_host
    xp = k_ns.xp
    if k_ns.kind == "torch" and str(arr.dtype) in _TORCH_WIDE_UNSIGNED:
        # torch's CPU kernels lack clamp/compare for uint16-64: widen first;
        # uint64 values >= 2**63 wrap negative and are all beyond the matrix.
        wide = arr.to(k_ns.native.int64)
        if str(arr.dtype) == "torch.uint64":
            wide = k_ns.native.where(wide < 0, n_cols, wide)
        arr = wide
    info = xp.iinfo(arr.dtype)
    clamped = xp.clip(arr, max(-n_rows, info.min), min(n_cols, info.max))
    index_dtype = xp.__array_namespace_info__().default_dtypes(device=device_of(arr))[
        "indexing"
    ]
    return xp.astype(clamped, index_dtype)


def _same_device(have: Any, want: Any) -> bool:
    if have == want:
        return True
    # torch.device("cuda") means the current CUDA device: match on type only.
    want_index = getattr(want, "index", 0)
    return want_index is None and getattr(have, "type", None) == want.type


# ---------------------------------------------------------------- size, out


@functools.lru_cache(maxsize=1)
def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not POSIX: no limit known
        return INT64_MAX


def _torch_storage_span(shape: tuple[int, ...]) -> int:
    """The largest number torch computes making ``shape``: its element count
    multiplied left to right (up to the first zero) and its strides."""
    strides, stride = [], 1
    for d in reversed(shape):
        strides.append(stride)
        stride *= max(d, 1)
    # torch multiplies the count in unsigned 64 bits: past 2**64 - 1 it fails.
    lead = math.prod(itertools.takewhile(bool, shape))
    return max(lead if lead >= 2**64 else 0, *strides)


def check_size(
    shape: tuple[int, ...],
    itemsize: int,
    on_host: bool,
    scratch: int = 0,
    kind: str = "numpy",
) -> None:
    """Refuse shapes that overflow or could never be allocated.

    ``scratch`` is the backend's temporary memory beyond the output; ``kind``
    the namespace, whose own limits apply to shapes with no elements.
    """
    n = math.prod(shape)
    if n > INT64_MAX:
        msg = f"output shape {shape} has {n} elements, more than 2**63 - 1"
        raise ValueError(msg)
    nbytes = n * itemsize
    if nbytes > INT64_MAX:
        msg = f"output shape {shape} needs {nbytes} bytes, more than 2**63 - 1"
        raise ValueError(msg)
    if n == 0:
        # Strides still span the nonzero dimensions: they must fit in int64.
        byte_strides = kind not in ("torch", "jax")
        if byte_strides:  # NumPy multiplies out every nonzero dimension
            span = math.prod(d for d in shape if d) * itemsize
        elif kind == "torch":  # its strides, and the storage they reach
            span = _torch_storage_span(shape)
        else:  # JAX arrays have no strides: only XLA's limits below
            span = 0
        # XLA aborts the process (no exception) when the dimensions before
        # the first zero multiply past 2**60.
        if kind == "jax" and math.prod(itertools.takewhile(bool, shape)) > 2**60:
            msg = (
                f"output shape {shape} has no elements but JAX cannot represent "
                f"it: its leading dimensions multiply past 2**60"
            )
            raise ValueError(msg)
        # XLA spends host memory on an empty array in proportion to the
        # dimensions before its first zero (about 8 bytes each, more with
        # several dimensions).
        cost = math.prod(itertools.takewhile(bool, shape)) * 16
        if kind == "jax" and on_host and cost > _physical_memory():
            msg = (
                f"output shape {shape} has no elements, but JAX needs about "
                f"{cost} bytes to make it, more than this machine's "
                f"{_physical_memory()} bytes of memory"
            )
            raise MemoryError(msg)
        if span > INT64_MAX:
            unit = "bytes" if byte_strides else "elements"
            msg = (
                f"output shape {shape} has no elements but cannot be "
                f"represented: its strides span {span} {unit}, more than 2**63 - 1"
            )
            raise ValueError(msg)
        return
    nbytes += scratch
    if on_host and nbytes > _physical_memory():
        msg = (
            f"output shape {shape} needs {nbytes} bytes, more than this "
            f"machine's {_physical_memory()} bytes of memory"
        )
        raise MemoryError(msg)


def _strides(out: Any, ns: Namespace) -> tuple[int, ...] | None:
    """``out``'s strides in elements, where the namespace tells them."""
    if ns.kind == "numpy" or ns.kind == "cupy":
        return tuple(s // out.itemsize for s in out.strides)
    if ns.kind == "torch":
        return tuple(out.stride())
    return None  # array-api-strict and others copy on write: no aliasing


def _overlaps_itself(shape: tuple[int, ...], strides: tuple[int, ...] | None) -> bool:
    """Whether two elements may share memory (conservative: a layout that is
    not a permutation of nested, non-overlapping strides counts as overlap)."""
    if strides is None or math.prod(shape) <= 1:
        return False
    extent = 1
    for size, stride in sorted(
        ((n, abs(st)) for n, st in zip(shape, strides, strict=True) if n > 1),
        key=lambda pair: pair[1],
    ):
        if stride < extent:
            return True
        extent = stride * (size - 1) + extent
    return False


def check_out(
    out: Any,
    out_ns: Namespace,
    shape: tuple[int, ...],
    dtype: Any,
    dev: Any,
) -> None:
    """Refuse an ``out`` that cannot take the result as it is."""
    if not out_ns.mutable:
        msg = f"out: {out_ns.kind} arrays are immutable and cannot be filled in place"
        raise TypeError(msg)
    if tuple(out.shape) != shape:
        msg = f"out has shape {tuple(out.shape)}; the result needs {shape}"
        raise ValueError(msg)
    if out.dtype != dtype:
        msg = f"out has dtype {out.dtype}; the result needs {dtype}"
        raise TypeError(msg)
    if out_ns.kind == "numpy" and not out.flags.writeable:
        msg = "out is read-only"
        raise ValueError(msg)
    if _overlaps_itself(tuple(out.shape), _strides(out, out_ns)):
        msg = (
            f"out has elements that share memory (strides {_strides(out, out_ns)}"
            f" for shape {tuple(out.shape)}); it cannot hold an eye"
        )
        raise ValueError(msg)
    if getattr(out, "requires_grad", False):
        msg = "out requires grad: autograd cannot track an in-place fill of it"
        raise ValueError(msg)
    if dev is not None and not _same_device(device_of(out), dev):
        msg = f"out is on device {device_of(out)}; device {dev!r} was asked for"
        raise ValueError(msg)
