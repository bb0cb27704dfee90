"""The backend contract: what eyelike must know of an array library
(``docs/internals.rst``, "The design", says how the pieces meet).

Each library is one subclass of `Backend` here (``generic`` for any other
Array API namespace), listed once in the registry (this package's
``__init__``). The contract is ten public names: a backend declares
``name``, ``namespaces`` and ``takes``; `device`, `shape_of` and `dtype`
check an argument each (raising the error that names it, before anything is
allocated), `device_of` says where an array lives, `to_numpy` shows values
on the host, and `short_eye` and `eye` build. Beneath them are the hooks,
the few facts of a library the rules (``eyelike._validate``) need, each
documented below with the generic Array API namespace's answer as its
default: a class attribute where it is a constant. A library overrides only
what it does differently.
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
from .._validate.text import show

__all__ = ["Backend", "Build", "Shape", "clamp", "host_device", "namespace_info"]

# A shape of any entries (`Backend.short_eye`: of plain ints there).
Shape = tuple[Any, ...]


def namespace_info(xp: Any) -> Any:
    """``xp``'s inspection API (``__array_namespace_info__()``), or None where
    it has none: the standard added it in 2023.12, and array-api-strict set
    to an earlier version raises rather than lack it."""
    get = getattr(xp, "__array_namespace_info__", None)
    if get is None:
        return None
    try:
        return get()
    except RuntimeError:
        return None


def host_device(device: Any, library: str, others: tuple[Any, ...] = ()) -> Any:
    """The one device rule of the libraries whose arrays live in host memory
    (NumPy, Dask, cubed): ``"cpu"``, or one of ``others`` (the library's own
    device objects); anything else is refused naming it, never dropped."""
    if (isinstance(device, str) and device == "cpu") or any(
        device is d for d in others
    ):
        return device
    msg = f"device must be None or 'cpu' for {library}; got {show(device)}"
    raise ValueError(msg)


def clamp(
    xp: Any, k: Any, n_rows: int, n_cols: int, index: Any, clip: Any = None
) -> Any:
    """An integer array ``k`` of ``xp`` clamped into ``[-n_rows, n_cols]``, in
    the index dtype ``index``; ``clip``: ``xp.clip``, or the library's own
    (Dask's: a ``k`` of CuPy chunks cannot meet array-api-compat's bounds)."""
    clip = clip or xp.clip
    if not (type(n_rows) is int and type(n_cols) is int):
        # Symbolic sizes cannot be compared with k's type's bounds: in
        # the index type first, which holds them (and k's every value
        # but uint64's past 2**63).
        return clip(xp.astype(k, index), -n_rows, n_cols)
    info = xp.iinfo(k.dtype)
    lo, hi = max(-n_rows, info.min), min(n_cols, info.max)
    if namespace_info(xp) is None:
        # Before the standard's 2023.12 (no inspection API, and no
        # clip): two wheres, of arrays (scalars came in 2024.12).
        device = getattr(k, "device", None)
        low = xp.asarray(lo, dtype=k.dtype, device=device)
        high = xp.asarray(hi, dtype=k.dtype, device=device)
        return xp.astype(xp.where(k < low, low, xp.where(k > high, high, k)), index)
    return xp.astype(clip(k, lo, hi), index)


class Build(NamedTuple):
    """One request for `Backend.eye`, every argument validated: the shape
    ``(*batch_shape, n_rows, n_cols)``; ``k``, an int or an integer array
    broadcastable to the batch, within ``[-n_rows, n_cols]`` (or the index
    type's range, for sizes known only when the program runs); the
    backend's own ``dtype`` and ``device`` (None: its default); the ``out``
    to fill (None: a fresh result); the lazy result's ``chunks`` as the
    caller gave them; `eye_like`'s ``x`` (``like``); and a fresh result's
    memory ``order`` (``"F"`` only for backends that take ``"order"``)."""

    shape: tuple[int, ...]
    k: Any
    dtype: Any
    device: Any = None
    out: Any = None
    chunks: Any = None
    like: Any = None
    order: Literal["C", "F"] = "C"


class Backend:
    """One array library, as the front end sees it (see the module's text)."""

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
    """The module of array-api-compat's wrapper, where the library needs one
    to follow the standard: the namespace `_xp` the defaults use."""
    _numpy_dtypes: ClassVar[bool] = False
    """Its dtypes are NumPy's (and ml_dtypes'), the same on every device:
    read by NumPy's own parser (`dtype`), not looked up in a table."""
    _dtype_hint: ClassVar[str] = ""
    """Ends the error for a standard dtype the device lacks (`dtype`)."""
    _host_memory: ClassVar[bool] = False
    """Its outputs live in this machine's main memory, whatever the device:
    `_held_bytes`'s default answer."""
    _scratch: ClassVar[int] = 9
    """Bytes per element of one matrix its build holds beside the output for
    a per-matrix ``k`` (the reference build's index difference and mask)."""
    _short_out: ClassVar[bool] = False
    """`short_eye` may take a call with an ``out`` (offered one only then: a
    library whose short path declines every ``out`` pays nothing)."""

    @functools.cached_property
    def _xp(self) -> Any:
        """The namespace the defaults use: `_standard`, or the library's own
        (imported on first use: one of its arrays or namespaces is in hand)."""
        return importlib.import_module(self._standard or self.namespaces[0])

    def __repr__(self) -> str:
        return f"<eyelike backend {self.name}>"

    # ---------------------------------------------------- the operations

    def device(self, device: Any) -> Any:
        """Check a caller's ``device`` (not None); returns the value to pass on.

        Raises
        ------
        ValueError
            ``device`` is not a device of this library here.
        """
        return device

    def device_of(self, x: Any) -> Any:
        """The device an array of this library lives on."""
        return array_device(x)

    def shape_of(self, x: Any, name: str) -> tuple[int, ...]:
        """``x``'s shape as a tuple of ints, or of sizes known only when the
        program runs (`is_symbolic`: ``jax.export``'s, torch's ``SymInt``).
        ``name`` is for errors.

        Raises
        ------
        ValueError
            A lazy array whose shape is not known yet (None or nan entries).
        """
        return _size.known_shape(x, name)

    def dtype(self, dtype: Any, device: Any) -> tuple[Any, int]:
        """The dtype object ``dtype`` means here (None: the default), and its
        item size in bytes; remembered per spelling (and device).

        Raises
        ------
        TypeError
            ``dtype`` is not a numeric or bool dtype offered on ``device``.
        """
        if self._numpy_dtypes:
            return _dtypes.numpy_dtype(dtype, self.name)
        return self._table_dtype((self, device), dtype, device)

    def _table_dtype(self, key: Any, dtype: Any, device: Any) -> tuple[Any, int]:
        """`_from_table`'s answer, remembered under ``key`` per spelling."""
        found = _dtypes.lookup(key, dtype)
        if found is None:
            found = _dtypes.remember(key, dtype, self._from_table(dtype, device))
        return found

    def _from_table(self, dtype: Any, device: Any) -> tuple[Any, int]:
        """`dtype`'s answer from `_dtype_table`, made once per spelling."""
        table = self._dtype_table(device)
        if dtype is None:
            info = namespace_info(self._xp)
            dtype = (
                table.get("float64", table.get("float32"))
                if info is None  # (the standard's default where it has one)
                else info.default_dtypes(device=device)["real floating"]
            )
        return _dtypes.from_table(dtype, table, self.name, self._dtype_hint)

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        """A NumPy array with ``x``'s values (copied to the host if needed)."""
        return np.asarray(x)

    def short_eye(
        self, shape: Shape, k: Any, dtype: Any, like: Any, device: Any, out: Any
    ) -> Any:
        """A call built at once where the gate lets it through (a backend
        runs it first: ``eyelike._validate.gate.admit`` of ``shape`` and
        ``k``, as given; torch's, while Dynamo traces, `admit_traced`); or
        None for the pipeline. The rest is the caller's own, unchecked: from `eye`,
        ``like`` None and ``device`` the caller's; from `eye_like`, ``like``
        its ``x`` (whose shape `_short_shape` gave) and ``dtype`` defaulting
        to ``x.dtype``. ``out`` is None unless `_short_out` is True; then it
        is the caller's (from `eye_like`, of any type), and ``dtype`` None
        means ``out``'s. A backend answers only its own rules (dtype, device,
        ``out``, a per-matrix ``k``'s type) and builds exactly what the
        pipeline would, where none could fail (``tests/api/test_short_path.py``
        compares the two). By default it declines."""
        return None

    def eye(self, build: Build) -> Any:
        """The batched eye ``build`` asks for (or its ``out``, filled)."""
        raise NotImplementedError

    # ------------------------------------------- hooks that are methods

    def _short_shape(self, x: Any) -> Shape | None:
        """``x``'s shape where `short_eye` may build ``eye_like(x)`` (``x`` of
        a type whose rules it knows); else None, for the pipeline."""
        return None

    def _dtype_table(self, device: Any) -> dict[str, Any]:
        """Name -> dtype object, for the dtypes offered on ``device`` (read by
        `dtype` once per spelling, where `_numpy_dtypes` is False)."""
        info = self._xp.__array_namespace_info__()
        return dict(info.dtypes(device=device, kind=("bool", "numeric")))

    def _index_dtype(self, device: Any) -> Any:
        """The index dtype on ``device``: a per-matrix ``k`` is clamped into it
        (`_clamp`), and bounds it where the sizes are symbolic."""
        info = namespace_info(self._xp)
        if info is None:  # (the standard's default where it has one)
            return getattr(self._xp, "int64", None) or self._xp.int32
        return info.default_dtypes(device=device)["indexing"]

    def _own_k(self, k: Any) -> Any:
        """A non-int ``k`` as this library reads it: as it is, but where the
        library traces host data as its own arrays (torch.compile)."""
        return k

    def _clamp(self, k: Any, n_rows: int, n_cols: int, device: Any) -> Any:
        """An integer array ``k`` of this library (checked) moved to the
        result's ``device`` (None: the default; the one policy for a ``k``
        on another device), then `clamp`-ed in the index type. By default
        moved by the standard's ``asarray(k, device=)`` where the namespace
        tells its devices apart (not ``to_device``: array-api-strict's
        before 2.4 fails on NumPy 1)."""
        info = namespace_info(self._xp)
        if info is not None:
            want = info.default_device() if device is None else device
            have = self.device_of(k)
            if have is not None and have != want:
                k = self._xp.asarray(k, device=want)
        index = self._index_dtype(self.device_of(k))
        return clamp(self._xp, k, n_rows, n_cols, index)

    def _held_bytes(
        self, of: Any, shape: tuple[int, ...], nbytes: int, device: Any
    ) -> int:
        """The bytes of an output of ``nbytes`` (of ``shape``, on ``device``,
        like ``of``: the ``out`` or ``x``, or None) that this process's main
        memory must hold (asked of an output larger than it): none where it
        is allocated elsewhere (a device's memory) or only traced (a shape
        traced allocates nothing); all, or this process's part of an array
        distributed over processes."""
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
        """Refuse an ``out`` whose strides do not nest (asked of such an out
        of the right shape and dtype) where its elements cannot be compared
        one by one here, saying why. By default they can (NumPy)."""

    def _same_device(self, have: Any, want: Any) -> bool:
        """Whether an ``out`` on device ``have`` is on the device ``want``
        (the caller's, checked) asked for."""
        return bool(have == want)
