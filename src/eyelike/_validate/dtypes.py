"""dtype resolution: one cache, two ways of reading a dtype.

Libraries built on NumPy dtypes read a caller's dtype with NumPy's parser,
plus ml_dtypes' names (`from_numpy`); the others look it up in the table of
dtypes the namespace offers on the device (`from_table`). The answer is
cached per backend, device and spelling: the common call pays one lookup.
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

import numpy as np

from .integers import is_array
from .text import show

# The standard's numeric dtypes plus the extras a library may have.
STANDARD_NAMES = (
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
EXTRA_NAMES = (
    "float16",
    "bfloat16",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float8_e4m3b11fnuz",
    "float8_e3m4",
    "float8_e4m3",
)
# Bytes per element, by standard name (NumPy has no bfloat16 of its own).
ITEMSIZE = {name: np.dtype(name).itemsize for name in (*STANDARD_NAMES, "float16")}
ITEMSIZE["bfloat16"] = 2
# What NumPy's dtype parser raises for text it cannot read (RecursionError:
# a nested list, read as a structured dtype).
_PARSE_ERRORS = (TypeError, ValueError, SyntaxError, OverflowError, RecursionError)
# Names of ml_dtypes' types (bfloat16, float8_e4m3fn, int4, complex32, ...),
# for the hint when it is not installed.
_ML_DTYPES_NAME = re.compile(r"bfloat16|float[4-8]_e\w+|u?int[124]|b?complex32")
# Spellings NumPy reads only with a DeprecationWarning (NumPy 2's 'a' for
# bytes; NumPy 1.2x's aliases ending in 0, and bool8): refused as unreadable
# before NumPy sees them. (No warning filter around the parse: a
# `warnings.catch_warnings` block is not thread-safe.)
_DEPRECATED_SPELLING = re.compile(r"[<>=|]?(a\d*|(u?int|object|str|bytes|void)0|bool8)")
# dtypes whose value set has no exact 0 (or no 1): they cannot hold an eye.
NO_ZERO = frozenset({"float8_e8m0fnu"})

# (the backend, device...; the spelling's type; the spelling) -> (dtype
# object, item size). The type keeps other libraries' equal-hashing dtypes
# (which may warn when compared with NumPy's) apart.
_CACHE: dict[tuple[Any, ...], tuple[Any, int]] = {}
_CACHE_LIMIT = 1024


class DTypeError(TypeError, ValueError):
    """A ``dtype`` eyelike cannot make an eye of: not a dtype, or not a
    numeric or bool dtype of the library on that device.

    Both a `TypeError` (NumPy's and torch's error for a bad dtype) and a
    `ValueError` (the Array API standard's libraries', array-api-strict's
    among them), so that code written against either catches it, as
    NumPy's ``AxisError`` is both a `ValueError` and an `IndexError`.
    """


DTypeError.__module__ = "eyelike"  # where users find it, and tracebacks name it


def lookup(key: Any, dtype: Any) -> tuple[Any, int] | None:
    """The answer remembered for the spelling ``dtype`` under ``key``, or None."""
    try:
        return _CACHE.get((key, type(dtype), dtype))
    except TypeError:  # an unhashable spelling: never remembered
        return None


def remember(key: Any, dtype: Any, found: tuple[Any, int]) -> tuple[Any, int]:
    """Remember ``found`` for the spelling ``dtype`` under ``key``; returns it."""
    try:
        if len(_CACHE) < _CACHE_LIMIT:
            _CACHE[(key, type(dtype), dtype)] = found
    except TypeError:
        pass
    return found


def numpy_dtype(dtype: Any, library: str) -> tuple[np.dtype[Any], int]:
    """`from_numpy`'s dtype and its item size, remembered per library and
    spelling (a NumPy dtype is the same on every device)."""
    found = lookup(library, dtype)
    if found is None:
        dt = from_numpy(dtype, library)
        found = remember(library, dtype, (dt, dt.itemsize))
    return found


def _parse(spec: Any) -> np.dtype[Any] | None:
    """``np.dtype(spec)``, or None where NumPy cannot read it or only guesses
    (it warns then: an array as a dtype, a deprecated alias such as 'a3')."""
    if isinstance(spec, np.dtype):
        return spec
    if isinstance(spec, str) and _DEPRECATED_SPELLING.fullmatch(spec):
        return None
    try:
        parsed: np.dtype[Any] = np.dtype(spec)
    except (*_PARSE_ERRORS, DeprecationWarning):  # the latter: warnings as errors
        return None
    return parsed


def dtype_name(dtype: Any) -> str | None:
    """The standard name of a dtype given in any form, or None."""
    if isinstance(dtype, str):
        return dtype
    # Not NumPy's parser on torch's dtype, which it cannot read: given one,
    # torch.compile fails (an internal error, not a graph break).
    parsed = None if type(dtype).__module__ == "torch" else _parse(dtype)
    if parsed is not None:
        return str(parsed.name)
    if isinstance(dtype, (list, tuple, dict)):  # no name; str() may recurse
        return None
    # torch.float32, array_api_strict.float32, ...: the name after the dot.
    name = str(dtype).rsplit(".", 1)[-1]
    return name if name in ITEMSIZE or name in EXTRA_NAMES else None


def is_ml_dtype(dt: np.dtype[Any]) -> bool:
    """One of ml_dtypes' types (bfloat16, float8_*, int4, ...)."""
    return dt.type.__module__.partition(".")[0] == "ml_dtypes"


def _refuse_value(dtype: Any) -> None:
    """Refuse a bool, or an array (or a module with a ``shape``, as
    ``numpy``) given as a dtype or anywhere inside a tuple, list or dict
    (NumPy's forms of a sub-array or structured dtype) given as one: NumPy
    would read its ``.dtype``, silently or warning. Each container is
    visited once, by its id (the caller's stay alive throughout)."""
    # The type test first: torch.compile cannot trace hasattr of a NumPy dtype.
    if isinstance(dtype, (str, np.dtype)):
        return
    value = isinstance(dtype, bool)
    seen: set[int] = set()
    todo = [dtype]
    while todo and not value:
        item = todo.pop()
        value = is_array(item) or (
            isinstance(item, ModuleType) and hasattr(item, "shape")
        )
        if isinstance(item, (tuple, list, dict)) and id(item) not in seen:
            seen.add(id(item))
            todo.extend(item.values() if isinstance(item, dict) else item)
    if value:
        msg = f"dtype must be a dtype or dtype name, not a value; got {show(dtype)}"
        raise DTypeError(msg)


def from_numpy(dtype: Any, library: str) -> np.dtype[Any]:
    """A NumPy dtype (ml_dtypes' included) for a library built on them."""
    if dtype is None:
        return np.dtype(np.float64)
    _refuse_value(dtype)
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
        msg = f"dtype {show(dtype)} is not a dtype that {library} knows"
        if isinstance(dtype, str) and _ML_DTYPES_NAME.fullmatch(dtype):
            try:
                import ml_dtypes
            except ImportError:
                msg += (
                    " without ml_dtypes, which has it: install "
                    "eyelike[ml-dtypes] (pip install 'eyelike[ml-dtypes]')"
                )
        raise DTypeError(msg)
    is_ml = is_ml_dtype(dt)
    if dt.kind not in "biufc" and not is_ml:
        msg = f"dtype must be a numeric or bool dtype; got {dt!r} ({dt.name})"
        raise DTypeError(msg)
    if is_ml:
        # Values a narrow format cannot hold exactly make a wrong "identity".
        zero, one = dt.type(0), dt.type(1)
        if dt.name in NO_ZERO or complex(zero) != 0 or complex(one) != 1:
            raise _no_eye(dt.name)
    return dt


def from_table(
    dtype: Any, table: dict[str, Any], library: str, hint: str = ""
) -> tuple[Any, int]:
    """The entry of ``table`` (name -> dtype object) that ``dtype`` means."""
    _refuse_value(dtype)
    # Like with like: array-api-strict warns compared with NumPy's.
    found = next(
        (n for n, c in table.items() if type(c) is type(dtype) and dtype == c), None
    )
    if found is None:
        found = dtype_name(dtype)
    if found not in table and isinstance(dtype, str):
        # The namespace's own spelling ("i4" for pydata sparse's, NumPy's
        # dtypes): one its dtype objects compare equal to.
        found = next((n for n, c in table.items() if _equals(c, dtype)), found)
    if found not in table:
        msg = (
            f"dtype {show(dtype)} is not a numeric dtype of {library} on this "
            f"device{hint if found in STANDARD_NAMES else ''}; allowed: "
            f"{', '.join(sorted(n for n in table if n not in NO_ZERO))}"
        )
        raise DTypeError(msg)
    if found in NO_ZERO:
        raise _no_eye(found)
    return table[found], ITEMSIZE.get(found, 1)


def _no_eye(name: str) -> DTypeError:
    """The refusal of a dtype that cannot hold 0 and 1 exactly."""
    return DTypeError(f"dtype {name} cannot represent 0 and 1 exactly, so no eye")


def _equals(candidate: Any, spelling: str) -> bool:
    """Whether a namespace's dtype object says it is ``spelling`` (a NumPy
    dtype: as NumPy's parser reads it, which warns on no spelling here)."""
    if isinstance(candidate, type) and issubclass(candidate, np.generic):
        candidate = np.dtype(candidate)  # (sparse lists NumPy's scalar types)
    if isinstance(candidate, np.dtype):
        parsed = _parse(spelling)
        return parsed is not None and bool(candidate == parsed)
    try:
        return bool(candidate == spelling)
    except Exception:  # a dtype that refuses the comparison: not its spelling
        return False
