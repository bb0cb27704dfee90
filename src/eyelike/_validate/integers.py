"""The one rule for integer arguments: counts, batch shapes and scalar offsets.

Shared by the front end and both operator adapters, so "is this an integer"
has one answer everywhere: a Python int, or an object with ``__index__``;
never a bool (an ``int`` subclass, but a truth value), a class or module
given where a value belongs, or a NumPy ``timedelta64``/``datetime64``
(NumPy makes ``timedelta64`` an integer subclass, though it is a duration).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

from .text import show, show_typed

# One name, not a chain: each link is a guard of torch.compile's program.
_NDARRAY = np.ndarray
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
MAX_BATCH_DIMS = 62  # NumPy's 64 dimensions, less the matrix's two


def is_bool_like(value: Any) -> bool:
    """A bool, a NumPy bool, or an array (of any library) of bools."""
    if isinstance(value, (bool, np.bool_)):
        return True
    dt = getattr(value, "dtype", None)
    return dt is not None and "bool" in str(dt)


def is_array(value: Any) -> bool:
    """An array of any library (NumPy's included): an object with a shape
    that is not a class, a module or a NumPy scalar."""
    # The type test first: torch.compile cannot trace hasattr of a NumPy type.
    if isinstance(value, (type, ModuleType, np.generic)):
        return False
    try:
        return hasattr(value, "shape")
    except Exception:  # one that cannot tell it (a strided nested tensor)
        return True


def is_masked(value: Any) -> bool:
    """A NumPy masked array with an entry masked (``numpy.ma.masked`` too):
    no value there, by numpy.ma's own rule."""
    return isinstance(value, np.ma.MaskedArray) and bool(np.ma.is_masked(value))


def not_data(value: Any) -> bool:
    """A class or module given where a value belongs (e.g. ``np.float32``)."""
    return isinstance(value, (type, ModuleType))


def is_time(value: Any) -> bool:
    """A NumPy ``timedelta64`` or ``datetime64``: durations, not counts."""
    return isinstance(value, (np.timedelta64, np.datetime64))


def is_integer_scalar(value: Any) -> bool:
    """A Python or NumPy integer scalar (the operators' int attributes)."""
    # (NumPy's bool is no np.integer; its timedelta64 is.)
    return isinstance(value, (int, np.integer)) and not isinstance(
        value, (bool, np.timedelta64)
    )


def index_or_none(value: Any) -> int | None:
    """``value`` as a Python int under the one rule, or None if it is not one
    (a caller's ``__index__`` that raises other than ``TypeError`` raises)."""
    if isinstance(value, _NDARRAY) and value.ndim == 0:
        value = one_element(value)  # (a bool stays a bool, a duration one)
    if type(value) is int:
        return value
    if isinstance(value, np.integer) and not is_time(value):
        return int(value)  # NumPy's integer scalars: the common other form
    if (
        is_bool_like(value)
        or not_data(value)
        or is_time(value)
        or holds_no_values(value)
    ):
        return None
    try:
        if not all(isinstance(d, int) for d in getattr(value, "shape", ())):
            return None  # a lazy array of unknown size is no integer yet
    except Exception:  # a shape that raises (a strided nested tensor's) or is
        return None  # no sequence (a mock's)
    if type(value).__name__ == "FakeTensor":
        # A tensor torch.export(strict=False) or a FakeTensorMode traces: its
        # symbolic value (``__index__`` would ask for the example's).
        fake: Any = value  # (no NumPy integer, which type checkers narrowed to)
        dt = fake.dtype
        if dt.is_floating_point or dt.is_complex or fake.numel() != 1:
            return None
        try:
            return fake.reshape(()).tolist()  # type: ignore[no-any-return]
        except RuntimeError:  # a FakeTensorMode's, holding no value
            return None
    try:
        return operator.index(value)
    except TypeError:
        return None
    except ValueError:  # an array with no value yet (ndonnx's lazy one)
        if is_array(value):
            return None
        raise


def not_an_integer(value: Any, must: str, forms: str = "") -> TypeError:
    """The error for a ``value`` that `index_or_none` refused: ``must`` says
    what was wanted, ``forms`` the forms taken (shown beside its type)."""
    if is_bool_like(value):
        return TypeError(f"{must}, not a bool; got {show(value)}")
    if is_masked(value):
        return TypeError(f"{must}, not a masked value; got {show(value)}")
    if not_data(value) or is_time(value):
        return TypeError(f"{must}; got {show(value)}")
    return TypeError(f"{must}{forms}; got {show_typed(value)}")


def host_values(value: np.ndarray[Any, Any]) -> Any:
    """A NumPy array's values as Python objects (``tolist``), each int read
    as the constant it is (torch.compile traces NumPy as a tensor and may
    read an int as a symbolic one: one guard on its value)."""
    # (``int()`` of an int is itself, eagerly; while tracing, the constant.)
    values = value.tolist()
    if isinstance(values, list):
        return [int(v) if type(v) is int else v for v in values]
    return int(values) if type(values) is int else values


def one_element(value: np.ndarray[Any, Any]) -> Any:
    """A 0-d NumPy array's element: a NumPy scalar, or (as torch.compile
    traces NumPy, where that is a 0-d array again) its value."""
    element = value[()]
    return host_values(value) if isinstance(element, _NDARRAY) else element


def traced_scalar(value: Any) -> Any:
    """A NumPy scalar that torch.compile traces as a 0-d array (one that
    indexing leaves a 0-d array): its value; any other value as it is (an
    eager 0-d array too)."""
    if type(value) is not _NDARRAY or value.ndim:  # (a MaskedArray: itself)
        return value
    element = one_element(value)
    return value if isinstance(element, np.generic) else element


def holds_no_values(value: Any) -> bool:
    """An array with a shape but no values to read: a meta tensor."""
    return getattr(value, "is_meta", False) is True


def within_int64(value: int, name: str) -> int:
    """``value`` if it is a non-negative int64, else ``ValueError`` naming it."""
    if value < 0:
        msg = f"{name} must be non-negative; got {value}"
        raise ValueError(msg)
    if value > INT64_MAX:
        msg = f"{name} must be at most 2**63 - 1 (int64); got {value}"
        raise ValueError(msg)
    return value


def signed_int64(value: int, name: str, of_type: str) -> int:
    """``value`` if int64 holds it, else ``ValueError`` naming it and the
    operator's type that says so (``of_type``)."""
    if not INT64_MIN <= value <= INT64_MAX:
        msg = f"{name} must fit in int64 ({of_type}); got {value}"
        raise ValueError(msg)
    return value


def is_symbolic(value: Any) -> bool:
    """A size known only when the program runs: a torch ``SymInt``
    (``torch.export``, ``torch.compile(dynamic=True)``) or a JAX symbolic
    dimension (``jax.export``). Known by its class, importing neither."""
    # (``startswith``, not ``partition``: torch.compile traces the one.)
    cls = type(value)
    name = cls.__name__
    return (name == "SymInt" and cls.__module__ == "torch") or (
        name == "_DimExpr" and cls.__module__.startswith("jax.")
    )


def dimension(value: Any, name: str) -> int:
    """A non-negative dimension: a Python int or any object with
    ``__index__``; a symbolic size as it is (reading its value would fix it
    to the example's: a guard)."""
    if type(value) is int and 0 <= value <= INT64_MAX:
        return value
    if is_symbolic(value):
        return value  # type: ignore[no-any-return]
    v = index_or_none(value)
    if v is None:
        must = f"{name} must be a non-negative integer"
        raise not_an_integer(value, must, " (int or object with __index__)")
    if is_symbolic(v):  # read from a traced tensor: known when the program runs
        return v
    return within_int64(v, name)


def batch_shape(value: Any, name: str = "batch_shape") -> tuple[int, ...]:
    """``batch_shape`` as a tuple of counts (an int, sequence or 1-D array)."""
    cls = type(value)  # (``type(value) is``, which type checkers narrow by)
    if cls is tuple and len(value) <= MAX_BATCH_DIMS:
        # The common spellings cost one pass: no conversion, no messages.
        if not value or all(type(v) is int and 0 <= v <= INT64_MAX for v in value):
            return value  # type: ignore[no-any-return]
    elif cls is int and 0 <= value <= INT64_MAX:
        return (value,)
    if is_symbolic(value):  # one batch dimension, known when the program runs
        return (value,)
    unreadable = False
    try:
        shape = getattr(value, "shape", None)
        shape = None if shape is None else tuple(shape)
    except Exception:  # one that raises (a strided nested tensor's) or is no
        shape, unreadable = None, True  # sequence (a mock's)
    if (
        unreadable
        or isinstance(value, (str, bytes))
        or not_data(value)
        or (shape is None and is_bool_like(value))
    ):
        msg = f"{name} must be an int or a sequence of ints; got {show(value)}"
        raise TypeError(msg)
    if shape is not None:
        if holds_no_values(value):
            msg = f"{name} must hold values; got a meta tensor of shape {shape}"
            raise TypeError(msg)
        if is_masked(value):
            raise not_an_integer(value, f"{name} must hold non-negative integers")
        if not all(isinstance(d, int) for d in shape):  # a lazy array
            msg = f"{name} must have a known shape; got {shape}"
            raise ValueError(msg)
        if len(shape) == 0:
            return (dimension(value, name),)
        if len(shape) != 1:
            msg = f"{name} must be 1-D when given as an array; got shape {shape}"
            raise ValueError(msg)
        # A NumPy array's values tell bools (torch.compile cannot read its
        # dtype); another library's dtype does.
        numpy = isinstance(value, _NDARRAY) and shape[0] <= MAX_BATCH_DIMS
        items = host_values(value) if numpy else value
        if any(type(v) is bool for v in items) if numpy else is_bool_like(value):
            msg = f"{name} must hold integers, not bools; got {show(value)}"
            raise TypeError(msg)
        # (Too many entries are refused below, before any is read.)
        count = shape[0]
        if not numpy and count <= MAX_BATCH_DIMS:
            try:
                items = value.tolist()
            except (TypeError, ValueError):  # no values yet (a tracer of
                # JAX's jit, a lazy array of ndonnx's)
                msg = f"{name} must hold known values; got {show(value)}"
                raise TypeError(msg) from None
            except (AttributeError, RuntimeError):
                # No tolist (array-api-strict), or one torch refuses (a
                # subclass, a sparse tensor, a FakeTensorMode's): its 0-D
                # entries have __index__ (or are refused, one by one).
                items = [value[i] for i in range(count)]
    elif isinstance(value, Sequence):
        items = value
        cls = type(value)
        if cls.__name__ == "range" and cls.__module__ == "builtins":
            # torch.compile(dynamic=True) cannot take the len() of a range of
            # symbolic ints: its bounds read as constants. (Known by name: the
            # builtin read here would be one more guard of compiled calls.)
            bounds: Any = value
            items = range(int(bounds.start), int(bounds.stop), int(bounds.step))
        count = len(items)
    elif hasattr(value, "__index__"):
        return (dimension(value, name),)
    else:
        msg = f"{name} must be an int or a sequence of ints; got {show(value)}"
        raise TypeError(msg)
    if count > MAX_BATCH_DIMS:
        # Checked before reading the entries: a huge range would take hours.
        msg = (
            f"{name} has {count} dimensions; at most {MAX_BATCH_DIMS} "
            f"are supported (NumPy arrays have at most 64 dimensions)"
        )
        raise ValueError(msg)
    dims = []
    for i, v in enumerate(items):  # in order: the first bad entry decides
        if isinstance(v, (list, tuple)):
            msg = (
                f"{name} must be a flat sequence of ints (one per batch "
                f"dimension); {name}[{i}] is a {type(v).__name__}"
            )
            raise TypeError(msg)
        dims.append(dimension(v, f"{name}[{i}]"))
    return tuple(dims)
