"""The fuzz tests' oracle: what each argument of ``eye`` and ``eye_like`` must
give, written from the specification (the README), independently of
eyelike's own validation code.

The fuzz tests (``test_fuzz_*.py``) make one argument hostile at a time (so
the name in an error is unambiguous), or all at once, and allow only:

* a result of the right namespace, shape and dtype whose values equal the
  rule ``col - row == k`` evaluated with Python ints (``conftest.reference``);
* ``TypeError``, ``ValueError`` or ``MemoryError`` with a non-empty message
  that names the parameter (size errors name the output ``shape``);
* the caller's own exception, raised by the caller's own ``__index__``,
  passing through unchanged (``Boom``);
* for the command line: exit code 0 with the right matrix printed, or
  ``SystemExit`` 0 (help) or 2 (a usage error, with a message).

The machine is pretended to have 64 MiB (``pretend_memory(LIMIT)``), so any
request over 64 MiB must be refused with ``MemoryError`` before allocating
on the host namespaces, and nothing big is ever allocated.

A verdict is a value (the count, dims, offsets, dtype, device or namespace
the call must use), a ``Bad`` (the call must fail naming the parameter),
``BOOM`` (the caller's own exception comes through), ``MAYBE`` (a dtype
object the oracle cannot name) or ``Unjudged`` (an input the oracle cannot
judge exactly, for a reason in ``UNJUDGED_REASONS``: the call still runs and
must keep the general contract). No input is left out for a known bug:
those the fuzzers found are fixed, each pinned by a test in
``test_fuzz_regressions.py``. ``fuzz_oracle_outputs`` turns the verdicts of
valid arguments into the expected output.

This module is also the one place the fuzz tests reach into eyelike's
private modules (``pretend_memory``, ``cli_main``, ``cli_parser``), so that a
rename of those modules is followed here only.
"""

from __future__ import annotations

import contextlib
import operator
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from unittest import mock

import numpy as np

from eyelike import _cli
from eyelike._validate import size as _size

from . import to_numpy
from .fuzz_namespaces import (
    INT64_MAX,
    default_dtype,
    kind_of,
    native_dtypes,
    optional,
    torch,
    xs,
)
from .fuzz_strategies import Boom, BoomIndex

# ------------------------------------------- eyelike's private names, here only

LIMIT = 64 << 20  # the pretend machine's memory, in bytes


@contextlib.contextmanager
def pretend_memory(nbytes: int) -> Iterator[None]:
    """Pretend the machine has ``nbytes`` of memory: bigger host outputs are
    refused, so that nothing big is ever allocated."""
    with mock.patch.object(_size, "physical_memory", return_value=nbytes):
        yield


# The command line's entry point (the ``eyelike`` script) and its parser.
cli_main: Callable[..., int] = _cli.main
cli_parser: Callable[[], Any] = _cli._parser

# ------------------------------------------------------------------ verdicts


@dataclass(frozen=True)
class Bad:
    """The call must fail with one of ``types``, naming one of ``names``."""

    types: tuple[type[BaseException], ...]
    names: tuple[str, ...]


@dataclass(frozen=True)
class MaybeNamed:
    """Either a right result or a ``TypeError`` naming ``name``."""

    name: str


@dataclass(frozen=True)
class Unjudged:
    """An input the oracle does not judge exactly, for the reason
    ``UNJUDGED_REASONS[reason]``: the call must still keep the general
    contract (a result, or an allowed error with a message)."""

    reason: str


UNJUDGED_REASONS = {
    "dask_device": "Dask has no devices: eyelike passes any device on unchecked",
    "a_real_gpu": "a CUDA device is present: the GPU tests cover it",
    "lazy_output_too_big_to_check": "a lazy output over 64 MiB is never computed",
    "maybe_dtype_size_unknown": "an unnamed dtype of unknown size near 2**63",
}

BOOM = "boom"  # the caller's own Boom must come through unchanged
MAYBE = "maybe"  # a dtype object the oracle cannot name (see MaybeNamed)


def failed(v: Any) -> bool:
    """Whether a verdict is a failure (or unjudged) rather than a value."""
    return isinstance(v, (Bad, Unjudged)) or (isinstance(v, str) and v == BOOM)


# ---------------------------------------------------------------- predicates


def is_bool_like(v: Any) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return True
    dt = getattr(v, "dtype", None)
    return dt is not None and "bool" in str(dt)


def not_a_number(v: Any) -> bool:
    """A class or module (``np.float32``, ``numpy``) or a date or duration:
    never a count or an offset, whatever ``__index__`` or ``shape`` they have."""
    return isinstance(v, (type, types.ModuleType, np.timedelta64, np.datetime64))


def integer_scalar(v: Any) -> bool:
    """A Python or NumPy integer: not a bool, not a timedelta64 (which NumPy
    makes an integer subclass, though it is a duration)."""
    if isinstance(v, (bool, np.bool_, np.timedelta64)):
        return False
    return isinstance(v, (int, np.integer))


# ------------------------------------------------------ counts and offsets


def known_shape(v: Any) -> bool:
    """False for an array whose size is not known yet (Dask's nan sizes)."""
    return all(isinstance(d, int) for d in getattr(v, "shape", ()))


def count_verdict(v: Any, name: str) -> Any:
    """A non-negative count: an int, an object with ``__index__``; no bool."""
    if isinstance(v, BoomIndex):
        return BOOM
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]  # its one element, under the same rule
    if is_bool_like(v) or not_a_number(v) or not known_shape(v):
        return Bad((TypeError,), (name,))
    try:
        i = operator.index(v)
    except TypeError:
        return Bad((TypeError,), (name,))
    if not 0 <= i <= INT64_MAX:
        return Bad((ValueError,), (name,))
    return i


def batch_verdict(v: Any) -> Any:
    """``batch_shape``: an int, or a sequence or 1-D array of counts."""
    name = "batch_shape"
    if isinstance(v, (str, bytes)):
        return Bad((TypeError,), (name,))
    if isinstance(v, (type, types.ModuleType)):  # np.float32, numpy: no data
        return Bad((TypeError,), (name,))
    shape = getattr(v, "shape", None)
    if shape is None and is_bool_like(v):
        return Bad((TypeError,), (name,))
    items: list[Any]
    if shape is not None:
        if not known_shape(v):  # a lazy array whose size Dask does not know
            return Bad((ValueError,), (name,))
        if len(shape) == 0:
            c = count_verdict(v, name)
            return c if failed(c) else (c,)
        if len(shape) != 1:
            return Bad((ValueError,), (name,))
        if is_bool_like(v):
            return Bad((TypeError,), (name,))
        items = list(to_numpy(v).tolist())
    elif isinstance(v, Sequence):
        items = list(v)
    elif hasattr(v, "__index__"):
        c = count_verdict(v, name)
        return c if failed(c) else (c,)
    else:
        return Bad((TypeError,), (name,))
    if len(items) > 62:  # NumPy's 64 dimensions, less the matrix's two
        return Bad((ValueError,), (name,))
    dims = []
    for item in items:
        c = count_verdict(item, name)
        if failed(c):
            return c
        dims.append(c)
    return tuple(dims)


def _broadcasts(shape: tuple[int, ...], batch: tuple[int, ...]) -> bool:
    try:
        return np.broadcast_shapes(shape, batch) == batch
    except ValueError:
        return False


def k_verdict(v: Any, ns: str, batch: tuple[int, ...]) -> Any:
    """``k``: an int, or an integer array/sequence broadcastable to ``batch``.

    Returns the offsets as Python ints (an int or an object array).
    """
    bad_type, bad_value = Bad((TypeError,), ("k",)), Bad((ValueError,), ("k",))
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]  # one offset: its one element, under the scalar rule
        if isinstance(v, (list, tuple)):  # an object array's one entry
            return bad_type
    if type(v) is int:
        return v
    if not_a_number(v):
        return bad_type
    if isinstance(v, Sequence) and not isinstance(v, (str, bytes, bytearray)):
        v = list(v)  # any Python sequence (a range, a deque) is read as a list
    is_array = hasattr(v, "shape") and not isinstance(v, np.generic)
    if not is_array and not isinstance(v, (list, tuple)):
        if isinstance(v, BoomIndex):
            return BOOM
        if is_bool_like(v):
            return bad_type
        try:
            return operator.index(v)
        except TypeError:
            return bad_type
    if isinstance(v, (list, tuple)):
        try:
            arr = np.asarray(v, dtype=object)
        except ValueError:
            return bad_value
        except Exception:
            # An entry NumPy cannot hold even as an object (torch's bfloat16
            # tensors fail their own conversion): not an integer either.
            return bad_type
        values = []
        for x in arr.ravel().tolist():  # in order: the first bad one decides
            if isinstance(x, BoomIndex):
                return BOOM
            if is_bool_like(x) or not_a_number(x) or not known_shape(x):
                return bad_type
            if getattr(x, "ndim", 0):
                # An array of rank >= 1 beside entries NumPy keeps as objects:
                # a ragged nest, not an integer (torch's __index__ would read
                # a one-element tensor as one).
                return bad_type
            try:
                values.append(operator.index(x))
            except TypeError:
                return bad_type
        if not _broadcasts(arr.shape, batch):
            return bad_value
        return np.array(values, dtype=object).reshape(arr.shape)
    kind = kind_of(v)
    if kind != "numpy" and kind != ns:
        return bad_type
    integral = v.dtype.kind in "iu" if kind == "numpy" else "int" in str(v.dtype)
    if is_bool_like(v) or not integral:
        return bad_type
    if not _broadcasts(tuple(v.shape), batch):
        return bad_value
    return np.array(to_numpy(v).tolist(), dtype=object)


def k_is_array(v: Any) -> bool:
    """Whether ``k`` reaches the backend as an array (per-matrix offsets)."""
    if isinstance(v, (list, tuple)):
        return True
    if isinstance(v, np.ndarray):
        return v.ndim > 0
    return hasattr(v, "shape") and not isinstance(v, np.generic)


# ------------------------------------------------------------------- dtypes


def np_dtype_quietly(v: Any) -> Any:
    """``np.dtype(v)``, or None where NumPy refuses it; ``BOOM`` where NumPy
    asked the caller's ``__index__``; a ``Bad`` where NumPy reads it only with
    a warning (``'a3'``, a deprecated alias of bytes): no numeric dtype is
    spelled so, and eyelike must not pass NumPy's warning on."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            dt = np.dtype(v)
        except (TypeError, ValueError, SyntaxError, OverflowError):
            dt = None  # NumPy's parser raises all four for text it cannot read
        except Boom:  # NumPy asked the caller's __index__ (a field offset)
            return BOOM
    return Bad((TypeError,), ("dtype",)) if caught else dt


def _exact_01(dt: np.dtype[Any]) -> bool:
    """Whether a NumPy (or ml_dtypes) type holds 0 and 1 exactly."""
    if dt.name == "float8_e8m0fnu":
        return False
    try:
        return complex(dt.type(0)) == 0 and complex(dt.type(1)) == 1
    except (TypeError, ValueError, OverflowError):
        return False


def _an_array_in(v: Any) -> bool:
    """Whether ``v``, or anything inside it as a tuple, list or dict (NumPy's
    spellings of sub-array and structured dtypes, whose entries it reads as
    dtypes too), is an array: a value, not a dtype, wherever it sits (a
    dtype spec holding itself is NumPy's to refuse)."""
    todo, seen = [v], set()
    while todo:
        item = todo.pop()
        if hasattr(item, "shape") and not isinstance(
            item, (type, np.dtype, np.generic)
        ):
            return True  # (a module with a shape too: numpy itself)
        # (The caller's own containers' ids: a copied list's would be reused.)
        if isinstance(item, (tuple, list, dict)) and id(item) not in seen:
            seen.add(id(item))
            todo.extend(item.values() if isinstance(item, dict) else item)
    return False


def dtype_verdict(v: Any, ns: str, device: Any = None) -> Any:
    """The dtype a call must produce (a NumPy dtype on NumPy, else a name)."""
    bad = Bad((TypeError,), ("dtype",))
    if v is None:
        return default_dtype(ns, device)
    if isinstance(v, bool):
        return bad
    if _an_array_in(v):
        return bad  # an array is a value, whose dtype NumPy would read
    dt = np_dtype_quietly(v)
    if isinstance(dt, (Bad, str)):  # a Bad, or BOOM
        return dt
    if ns in ("numpy", "dask"):  # Dask's chunks are made by the NumPy backend
        if dt is None:
            return MAYBE
        if dt.type.__module__ == "ml_dtypes":
            return dt if _exact_01(dt) else bad
        return dt if dt.kind in "biufc" else bad
    table = native_dtypes(ns, device)
    if isinstance(v, str):
        if v in table:
            return v
        # The namespace's own spelling: one of its NumPy dtypes (JAX's), as
        # NumPy's parser reads it ("i4").
        for name, native in table.items():
            if isinstance(native, np.dtype) and dt is not None and native == dt:
                return name
        return bad
    if ns == "array_api_strict" and any(v is t for t in (bool, int, float, complex)):
        return bad  # its own rule: no Python type is a dtype
    for name, native in table.items():
        if v is native or (type(v) is type(native) and v == native):
            return name
    if dt is not None:
        return dt.name if dt.name in table else bad
    return MAYBE


# ------------------------------------------------------ device, namespace


def device_verdict(v: Any, ns: str) -> Any:
    """The device the result must be on (None: the default), or the failure."""
    bad = Bad((ValueError,), ("device",))
    if v is None:
        return None
    if ns == "numpy":
        return "cpu" if isinstance(v, str) and v == "cpu" else bad
    if ns == "torch":
        try:
            dev = torch.device(v)
        except (RuntimeError, TypeError, ValueError):
            return bad
        if dev.type in ("cpu", "meta"):
            return dev
        if dev.type == "cuda" and torch.cuda.is_available():  # pragma: no cover
            return Unjudged("a_real_gpu")
        return bad  # a device type this build or machine does not have
    if ns == "array_api_strict":
        for d in xs.__array_namespace_info__().devices():
            if v is d or (type(v) is type(d) and v == d):
                return d
        return bad
    if ns == "jax":
        import jax

        if isinstance(v, jax.Device):
            return v
        if not isinstance(v, str):
            return bad
        try:
            return jax.devices(v)[0]
        except RuntimeError:
            return bad
        except Exception:  # whatever JAX says, eyelike must name device
            return Bad((TypeError, ValueError), ("device",))
    return Unjudged("dask_device")


def xp_verdict(v: Any) -> Any:
    """``xp``: the namespace a module names, or the failure."""
    if v is None or v is np:
        return "numpy"
    for name in ("torch", "jax", "array_api_strict", "dask"):
        module = optional({"jax": "jax.numpy", "dask": "dask.array"}.get(name, name))
        if module is not None and v is module:
            return name
    return Bad((TypeError,), ("xp",))
