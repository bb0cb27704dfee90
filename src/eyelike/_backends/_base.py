"""The backend contract: what eyelike must know of an array library.

Each library is one subclass of `Backend` in this package (a module, or a
subpackage where it needs more than one file; ``generic`` for any other
Array API namespace), listed once in the registry (this package's
``__init__``). The front end gets the backend of ``xp``, ``out`` or ``x``
from the registry and hands it to the pipeline (``eyelike._pipeline``),
which asks it about each argument once, in a fixed order, then calls
`Backend.eye`; neither asks which library it talks to.

The contract is ten public names. A backend declares three: ``name``,
``namespaces`` and ``takes``. It performs seven operations: `device`,
`shape_of` and `dtype` check an argument each (raising the error that names
it, before anything is allocated), `device_of` says where an array lives,
`to_numpy` shows values on the host, and `short_eye` and `eye` build.

Beneath them are the hooks: the few facts of a library that the rules
(``eyelike._validate``) need, each documented below, with the generic Array
API namespace's answer as its default: a class attribute where it is a
constant, a method where it depends on the call. A library overrides only
what it does differently.
"""

from __future__ import annotations

import importlib
import math
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np
from array_api_compat import device as array_device

from .._validate import dtypes as _dtypes
from .._validate import size as _size
from .._validate.text import show

__all__ = ["Backend", "Build", "Shape", "host_device", "namespace_info"]

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


class Build(NamedTuple):
    """One request for `Backend.eye`, every argument validated.

    Attributes
    ----------
    shape
        ``(*batch_shape, n_rows, n_cols)``.
    k
        An int, or an integer array broadcastable to the batch dimensions,
        within ``[-n_rows, n_cols]`` (or the index type's range, for sizes
        known only when the program runs).
    dtype, device
        The backend's own dtype object, and device (None: its default).
    out, like
        The array to fill (None: a fresh one); `eye_like`'s ``x``, or None.
    chunks
        The lazy result's chunks (Dask's, cubed's), as the caller gave them
        (None: the library's default).
    order
        ``"C"`` or ``"F"``: a fresh result's memory layout (``"F"`` only
        for backends that take ``"order"``).
    """

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
    _host_memory: ClassVar[bool | None] = False
    """Its outputs live in this machine's main memory, which an output must
    fit (True); never (False: nothing tells where a generic namespace's
    devices are); or it depends on the device: `_on_host` answers (None)."""
    _scratch: ClassVar[int] = 9
    """Bytes per element of one matrix its build holds beside the output for
    a per-matrix ``k`` (the reference build's index difference and mask)."""
    _short_out: ClassVar[bool] = False
    """`short_eye` may take a call with an ``out`` (offered one only then: a
    library whose short path declines every ``out`` pays nothing)."""

    def __init__(self, xp: Any = None) -> None:
        # A library's own (imported: one of its arrays is in hand); or given.
        if xp is None:
            xp = importlib.import_module(self._standard or self.namespaces[0])
        self._xp = xp

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

    def _move_k(self, k: Any, device: Any) -> Any:
        """A per-matrix ``k`` of this library on the result's ``device``
        (None: the namespace's default), for `_clamp`: the one policy for a
        ``k`` on another device is to move it there, before anything is
        built. By default through the standard's ``asarray(k, device=)``,
        where the namespace tells its devices apart (its inspection API).
        (Not ``to_device``: array-api-strict's before 2.4 fails on NumPy 1.)"""
        info = namespace_info(self._xp)
        if info is None:
            return k
        if device is None:
            device = info.default_device()
        have = self.device_of(k)
        if have is None or have == device:
            return k
        return self._xp.asarray(k, device=device)

    def _integral(self, dtype: Any) -> bool:
        """Whether an array ``k`` of this library with ``dtype`` holds integers."""
        return bool(self._xp.isdtype(dtype, "integral"))

    def _clamp(self, k: Any, n_rows: int, n_cols: int, device: Any) -> Any:
        """An integer array ``k`` of this library (checked) on the result's
        ``device`` (`_move_k`), clamped into ``[-n_rows, n_cols]`` in the
        index type."""
        k = self._move_k(k, device)
        xp = self._xp
        index = self._index_dtype(self.device_of(k))
        if not (type(n_rows) is int and type(n_cols) is int):
            # Symbolic sizes cannot be compared with k's type's bounds: in
            # the index type first, which holds them (and k's every value
            # but uint64's past 2**63).
            return xp.clip(xp.astype(k, index), -n_rows, n_cols)
        info = xp.iinfo(k.dtype)
        lo, hi = max(-n_rows, info.min), min(n_cols, info.max)
        if namespace_info(xp) is None:
            # Before the standard's 2023.12 (no inspection API, and no
            # clip): two wheres, of arrays (scalars came in 2024.12).
            device = self.device_of(k)
            low = xp.asarray(lo, dtype=k.dtype, device=device)
            high = xp.asarray(hi, dtype=k.dtype, device=device)
            clamped = xp.where(k < low, low, xp.where(k > high, high, k))
        else:
            clamped = self._clip(k, lo, hi)
        return xp.astype(clamped, index)

    def _clip(self, k: Any, lo: int, hi: int) -> Any:
        """``clip(k, lo, hi)`` with bounds that fit ``k``'s type, for `_clamp`."""
        return self._xp.clip(k, lo, hi)

    def _on_host(self, device: Any) -> bool:
        """Whether an output on ``device`` is in this machine's main memory
        (asked where `_host_memory` is None, of an output larger than it)."""
        return False

    def _traced_only(self) -> bool:
        """Whether this call only traces shapes, allocating nothing (asked of
        an output in host memory larger than it)."""
        return False

    def _held_bytes(self, of: Any, shape: tuple[int, ...], nbytes: int) -> int:
        """The bytes of ``nbytes`` (an output of ``shape`` like ``of``, the
        ``out`` or ``x``, or None) that this process holds (asked of an
        output larger than this machine's memory): all of them, unless the
        library distributes its arrays over processes."""
        return nbytes

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
