"""The backend contract: what eyelike must know of an array library, one
subclass of `Backend` each (``docs/internals.rst`` says how they meet).

Ten public names: a backend declares ``name``, ``namespaces`` and
``takes``; `device`, `shape_of` and `dtype` check an argument each,
`device_of` and `to_numpy` read an array, `short_eye` and `eye` build.
Beneath them, the hooks: the few facts of a library the rules need, with
the generic Array API namespace's answer as the default.
"""

from __future__ import annotations

import functools
import importlib
import math
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np
from array_api_compat import device as array_device

from .._validate import dtypes as _dtypes
from .._validate import size as _size
from .._validate.offsets import clamp_array
from .._validate.text import show

__all__ = ["Backend", "Build", "Shape", "host_device", "namespace_info"]

# A shape of any entries (`Backend.short_eye`: of plain ints there).
Shape = tuple[Any, ...]


def namespace_info(xp: Any) -> Any:
    """``xp``'s inspection API, or None where it has none (before the
    standard's 2023.12: array-api-strict set to one raises)."""
    get = getattr(xp, "__array_namespace_info__", None)
    if get is None:
        return None
    try:
        return get()
    except RuntimeError:
        return None


def host_device(device: Any, library: str, others: tuple[Any, ...] = ()) -> Any:
    """The device rule of the libraries whose arrays live in host memory:
    ``"cpu"``, or one of ``others`` (the library's own device objects);
    anything else is refused naming it, never dropped."""
    if (isinstance(device, str) and device == "cpu") or any(
        device is d for d in others
    ):
        return device
    msg = f"device must be None or 'cpu' for {library}; got {show(device)}"
    raise ValueError(msg)


class Build(NamedTuple):
    """One request for `Backend.eye`, every argument validated: ``k`` an int
    or an integer array broadcastable to the batch, clamped (`Backend._clamp`;
    JAX's within its jitted build); ``like``: `eye_like`'s ``x``
    (``docs/internals.rst``: "The request")."""

    shape: tuple[int, ...]
    k: Any
    dtype: Any
    device: Any = None
    out: Any = None
    chunks: Any = None
    like: Any = None
    order: Literal["C", "F"] = "C"


class Backend:
    """One array library, as the front end sees it."""

    # ---------------------------------------------------- what it declares

    name: str = "array_api"
    """The library's name, in messages."""
    namespaces: ClassVar[tuple[str, ...]] = ()
    """Its namespace modules' names: its own first (what the command line
    imports), then every other that ``array_namespace`` gives for its arrays."""
    takes: ClassVar[frozenset[str]] = frozenset({"out"})
    """Which of ``eye``'s keywords beyond the standard it honours: ``"out"``
    (its arrays can be filled in place), ``"order"``, ``"chunks"``."""

    # ------------------------------------------ hooks that are constants

    _standard: ClassVar[str | None] = None
    """array-api-compat's wrapper, where the library needs one: `_xp`."""
    _numpy_dtypes: ClassVar[bool] = False
    """Its dtypes are NumPy's (and ml_dtypes'), read by NumPy's parser, not
    looked up in a table (`_dtype_table`)."""
    _dtype_hint: ClassVar[str] = ""
    """Ends the error for a standard dtype the device lacks (`dtype`)."""
    _host_memory: ClassVar[bool] = False
    """Its outputs live in main memory, whatever the device (`_held_bytes`)."""
    _scratch: ClassVar[bool] = True
    """Whether its build of a per-matrix ``k`` holds the mask beside the
    output (a bool an element, and one matrix of int64 index differences:
    the reference build's), unless it says otherwise per call (`_masks`)."""
    _short_out: ClassVar[bool] = False
    """`short_eye` may take a call with an ``out`` (offered one only then)."""

    @functools.cached_property
    def _xp(self) -> Any:
        """The namespace the defaults use: `_standard`, or the library's own
        (imported: one of its arrays or namespaces is in hand)."""
        return importlib.import_module(self._standard or self.namespaces[0])

    def __repr__(self) -> str:
        return f"<eyelike backend {self.name}>"

    # ---------------------------------------------------- the operations

    def device(self, device: Any) -> Any:
        """Check a caller's ``device`` (not None), raising ValueError where it
        is no device of this library here; returns the value to pass on."""
        return device

    def device_of(self, x: Any) -> Any:
        """The device an array of this library lives on."""
        return array_device(x)

    def shape_of(self, x: Any, name: str) -> tuple[int, ...]:
        """``x``'s shape as a tuple of ints, or of sizes known only when the
        program runs (``jax.export``'s, torch's ``SymInt``); ValueError for
        a lazy array's not known yet (None or nan entries), naming ``name``."""
        return _size.known_shape(x, name)

    def dtype(self, dtype: Any, device: Any) -> tuple[Any, int]:
        """The dtype object ``dtype`` means here (None: the default), and its
        item size in bytes, remembered per spelling (and device); TypeError
        where it is no numeric or bool dtype offered on ``device``."""
        if self._numpy_dtypes:
            return _dtypes.numpy_dtype(dtype, self.name)
        return self._from_table(dtype, device, (self, device))

    def _from_table(self, dtype: Any, device: Any, key: Any) -> tuple[Any, int]:
        """`dtype`'s answer from `_dtype_table`, remembered per spelling under
        ``key`` (None: not remembered, as while torch.compile traces)."""
        found = None if key is None else _dtypes.lookup(key, dtype)
        if found is not None:
            return found
        table, wanted = self._dtype_table(device), dtype
        if dtype is None:
            info = namespace_info(self._xp)
            wanted = (
                table.get("float64", table.get("float32"))
                if info is None  # (the standard's default where it has one)
                else info.default_dtypes(device=device)["real floating"]
            )
        found = _dtypes.from_table(wanted, table, self.name, self._dtype_hint)
        return found if key is None else _dtypes.remember(key, dtype, found)

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        """A NumPy array with ``x``'s values (copied to the host if needed)."""
        return np.asarray(x)

    def short_eye(
        self, shape: Shape, k: Any, dtype: Any, like: Any, device: Any, out: Any
    ) -> Any:
        """A call built at once, exactly as the pipeline would, where the gate
        (``_validate.gate.admit``, run first) lets it through; else None (by
        default). The arguments are the caller's own, unchecked: from
        `eye_like`, ``like`` is ``x`` (shape: `_short_shape`) and ``dtype``
        defaults to ``x.dtype``; ``out`` is None unless `_short_out`."""
        return None

    def eye(self, build: Build) -> Any:
        """The batched eye ``build`` asks for (or its ``out``, filled)."""
        raise NotImplementedError

    # ------------------------------------------- hooks that are methods

    def _short_shape(self, x: Any) -> Shape | None:
        """``x``'s shape where `short_eye` may build ``eye_like(x)``, else None."""
        return None

    def _dtype_table(self, device: Any) -> dict[str, Any]:
        """Name -> dtype object, for the dtypes offered on ``device``."""
        info = self._xp.__array_namespace_info__()
        return dict(info.dtypes(device=device, kind=("bool", "numeric")))

    def _index_dtype(self, device: Any) -> Any:
        """The index dtype on ``device``, into which `_clamp` clamps ``k``."""
        info = namespace_info(self._xp)
        if info is None:  # (the standard's default where it has one)
            return getattr(self._xp, "int64", None) or self._xp.int32
        return info.default_dtypes(device=device)["indexing"]

    def _host_bounds(self, n_rows: Any, n_cols: Any) -> tuple[int, int]:
        """The bounds host offsets are clamped into: ``-n_rows`` and
        ``n_cols`` where they are Python ints; else the index type's range
        (a size known only when the program runs is not compared with ``k``:
        a guard of torch's, undecidable for JAX)."""
        if type(n_rows) is int and type(n_cols) is int:
            return -n_rows, n_cols
        limit = int(self._xp.iinfo(self._index_dtype(None)).max)
        return -limit, limit

    def _own_k(self, k: Any) -> Any:
        """A non-int ``k`` as this library reads it: as it is, but where the
        library traces host data as its own arrays (torch.compile)."""
        return k

    def _clamp(self, k: Any, n_rows: int, n_cols: int, device: Any) -> Any:
        """An integer array ``k`` of this library (checked) moved to the
        result's ``device`` (the one policy for a ``k`` elsewhere), then
        clamped (`clamp_array`). Moved by ``asarray(k, device=)``
        (``to_device`` of array-api-strict before 2.4 fails on NumPy 1)."""
        info = namespace_info(self._xp)
        if info is not None:
            want = info.default_device() if device is None else device
            have = self.device_of(k)
            if have is not None and not self._same_device(have, want):
                k = self._xp.asarray(k, device=want)
        index = self._index_dtype(self.device_of(k))
        return clamp_array(self._xp, k, n_rows, n_cols, index, self._clip)

    def _clip(self, k: Any, lo: Any, hi: Any, index: Any) -> Any:
        """``k`` clipped into ``[lo, hi]`` (bounds its type holds), as the
        index dtype ``index``: `clamp_array`'s ``clip``, by the standard's."""
        xp = self._xp
        if namespace_info(xp) is None:
            # No inspection API, so no clip either: two wheres, of arrays
            # (scalars came in 2024.12).
            device = getattr(k, "device", None)
            low = xp.asarray(lo, dtype=k.dtype, device=device)
            high = xp.asarray(hi, dtype=k.dtype, device=device)
            return xp.astype(xp.where(k < low, low, xp.where(k > high, high, k)), index)
        return xp.astype(xp.clip(k, lo, hi), index)

    def _held_bytes(
        self, of: Any, shape: tuple[int, ...], nbytes: int, device: Any
    ) -> int:
        """How many of an output's ``nbytes`` (of ``shape`` on ``device``, like
        ``of``: the ``out`` or ``x``, or None) this process's main memory
        must hold (asked where they exceed it): none where it is allocated
        elsewhere or only traced; else all, or this process's part."""
        return nbytes if self._host_memory else 0

    def _check_empty(self, shape: tuple[int, ...], itemsize: int, device: Any) -> None:
        """Refuse a shape with no elements that the library cannot make on
        ``device``. By default its strides (in bytes, as NumPy counts them)
        multiply out every nonzero dimension, and must fit in int64."""
        _size.refuse_span(shape, math.prod(d for d in shape if d) * itemsize, "bytes")

    def _out_strides(self, out: Any) -> tuple[int, ...] | None:
        """Refuse an ``out`` the library would not let us write (raising the
        error that says why); else its strides in elements, or None where no
        two elements can alias (contiguous, or copied on write)."""
        return None

    def _check_unnested(self, shape: tuple[int, ...], strides: tuple[int, ...]) -> None:
        """Refuse an ``out`` whose strides do not nest where its elements
        cannot be compared one by one here, saying why (by default they can)."""

    def _masks(self, shape: tuple[int, ...], dtype: Any, out: Any) -> bool:
        """Whether its build of a per-matrix ``k`` holds the mask beside an
        output of ``shape`` and ``dtype`` (``out``, or None): `_scratch`."""
        return self._scratch

    def _same_device(self, have: Any, want: Any) -> bool:
        """Whether device ``have`` (an ``out``'s, or one a caller passed) is
        the device ``want``; a comparison that refuses or fails is no."""
        try:
            return have is want or bool(have == want)
        except Exception:
            return False
