"""The backend contract: what eyelike must know of an array library.

Each library is one subclass of `Backend` in its own module of this package
(``generic`` for any other Array API namespace), listed once in the
registry (this package's ``__init__``). The front end gets the backend of
``xp``, ``out`` or ``x`` from the registry, asks it about each argument in
turn, then calls `Backend.eye`; it never asks which library it talks to.

The contract is twelve names. A backend declares three:

- ``name``: the library's name in messages;
- ``namespaces``: the names of its namespace modules, the library's own
  first (what the command line imports), then every other (those that
  ``array_namespace`` gives for its arrays among them);
- ``takes``: which of ``eye``'s keywords beyond the standard it honours
  (``"out"``: its arrays can be filled in place; ``"order"``; ``"chunks"``).

It performs nine operations: `device`, `shape_of`, `dtype`, `offsets` and
`check_output` check an argument each (raising the error that names it,
before anything is allocated), `device_of` says where an array lives,
`to_numpy` shows values on the host, and `small_eye` and `eye` build.

Every default here is a generic Array API namespace's. A library overrides
an operation it does differently, or one of the steps below that a default
operation takes (each used by that operation only):

- ``_standard``: the module of array-api-compat's wrapper, where the
  library needs one to follow the standard (the namespace ``_xp``);
- ``_dtype_table(device)``: the dtypes offered on a device, and
  ``_from_table(dtype, device, hint)``: the one ``dtype`` means (`dtype`);
- ``_index_dtype(device)``, ``_clamp(k, n_rows, n_cols)``: the index type,
  and a ``k`` array clamped into it (`offsets`);
- ``_on_host(device)``, ``_scratch(n_rows, n_cols, k)``,
  ``_check_empty(shape, itemsize, on_host)``: memory, and the limits on a
  shape with no elements; ``_traced_only()``: whether this call only traces
  shapes, asked of an output too large for memory (`check_output`);
- ``_check_out(out)``: refuse an ``out`` the library would not let us
  write, else give its strides (None where no two elements can alias);
  ``_same_device(have, want)``: whether an ``out`` on ``have`` is on the
  device asked for (`check_output`).
"""

from __future__ import annotations

import importlib
import math
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np
from array_api_compat import device as array_device

from .._validate import dtypes as _dtypes
from .._validate import offsets as _offsets
from .._validate import size as _size
from .._validate.out import check_out
from .._validate.size import check as check_size
from .._validate.text import show
from .reference import array_api_eye

__all__ = ["Backend", "Build"]


class Build(NamedTuple):
    """One request for `Backend.eye`, every argument validated.

    Attributes
    ----------
    shape
        ``(*batch_shape, n_rows, n_cols)``.
    k
        `Backend.offsets`'s answer: an int, or an integer array broadcastable
        to the batch dimensions, within ``[-n_rows, n_cols]`` (or the index
        type's range, for sizes known only when the program runs).
    dtype, device
        The backend's own dtype object, and device (None: its default).
    out, like
        The array to fill (None: a fresh one); `eye_like`'s ``x``, or None.
    chunks
        Dask's chunks along the batch dimensions (None: the default).
    order
        ``"C"`` or ``"F"``: a fresh result's memory layout (``"F"`` only
        for backends that take ``"order"``).
    """

    shape: tuple[int, ...]
    k: Any
    dtype: Any
    device: Any
    out: Any
    chunks: Any = None
    like: Any = None
    order: Literal["C", "F"] = "C"


class Backend:
    """One array library, as the front end sees it (see the module's text)."""

    name: str = "array_api"
    namespaces: ClassVar[tuple[str, ...]] = ()
    takes: ClassVar[frozenset[str]] = frozenset({"out"})
    _standard: ClassVar[str | None] = None

    def __init__(self, xp: Any = None) -> None:
        # A library's own (imported: an array or namespace of it is in
        # hand); the generic path's is given.
        if xp is None:
            xp = importlib.import_module(self._standard or self.namespaces[0])
        self._xp = xp

    def __repr__(self) -> str:
        return f"<eyelike backend {self.name}>"

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

    # ----------------------------------------------------------- dtypes

    def dtype(self, dtype: Any, device: Any) -> tuple[Any, int]:
        """The dtype object ``dtype`` means here (None: the default), and its
        item size in bytes.

        Raises
        ------
        TypeError
            ``dtype`` is not a numeric or bool dtype offered on ``device``.
        """
        return _dtypes.cached((self, device), dtype, self._from_table, device)

    def _from_table(self, dtype: Any, device: Any, hint: str = "") -> tuple[Any, int]:
        if dtype is None:
            info = self._xp.__array_namespace_info__()
            dtype = info.default_dtypes(device=device)["real floating"]
        table = self._dtype_table(device)
        return _dtypes.from_table(dtype, table, self.name, hint)

    def _dtype_table(self, device: Any) -> dict[str, Any]:
        info = self._xp.__array_namespace_info__()
        return dict(info.dtypes(device=device, kind=("bool", "numeric")))

    # ---------------------------------------------------------- offsets

    def offsets(self, k: Any, batch: tuple[int, ...], n_rows: int, n_cols: int) -> Any:
        """``k`` checked and clamped into ``[-n_rows, n_cols]``: a Python int,
        an int64 NumPy array of host values, or an integer array of this
        library, broadcastable to ``batch``. (An array of another library is
        refused before, by the front end, which knows them all.)

        Raises
        ------
        TypeError
            ``k`` is not an integer, a sequence of them or an integer array.
        ValueError
            ``k``'s shape does not broadcast to ``batch``.
        """
        plain = type(n_rows) is int and type(n_cols) is int
        if plain and type(k) is int:  # the common call: no more than this
            return min(max(k, -n_rows), n_cols)
        if not _offsets.is_library_array(k):
            # A size known only when the program runs is not compared with k
            # (a guard of torch's program; undecidable for JAX): the index
            # type's range holds it, and keeps k's meaning.
            if plain:
                return _offsets.host_offsets(k, batch, (-n_rows, n_cols))
            limit = int(self._xp.iinfo(self._index_dtype(None)).max)
            return _offsets.host_offsets(k, batch, (-limit, limit))
        _offsets.refuse_dtype(k, bool(self._xp.isdtype(k.dtype, "integral")))
        _offsets.check_broadcast(self.shape_of(k, "k"), batch)
        return self._clamp(k, n_rows, n_cols)

    def _index_dtype(self, device: Any) -> Any:
        info = self._xp.__array_namespace_info__()
        return info.default_dtypes(device=device)["indexing"]

    def _clamp(self, k: Any, n_rows: int, n_cols: int) -> Any:
        xp = self._xp
        index = self._index_dtype(self.device_of(k))
        if not (type(n_rows) is int and type(n_cols) is int):
            # Symbolic sizes cannot be compared with k's type's bounds: in
            # the index type first, which holds them (and k's every value
            # but uint64's past 2**63).
            return xp.clip(xp.astype(k, index), -n_rows, n_cols)
        info = xp.iinfo(k.dtype)
        clamped = xp.clip(k, max(-n_rows, info.min), min(n_cols, info.max))
        return xp.astype(clamped, index)

    # ----------------------------------------------------------- output

    def check_output(
        self,
        shape: tuple[int, ...],
        dtype: Any,
        itemsize: int,
        device: Any,
        k: Any,
        out: Any,
    ) -> None:
        """Refuse an output of ``shape`` this library cannot make here (at
        ``itemsize`` bytes an element, with `offsets`'s ``k``), or an ``out``
        (if not None) that cannot take it: of another shape, dtype or device,
        read-only, or with elements that share memory.

        Raises
        ------
        TypeError
            ``out`` of the wrong dtype, or of a library with immutable arrays.
        ValueError
            A size that overflows, an ``out`` of the wrong shape or device.
        MemoryError
            An output larger than this machine's memory (host backends).
        """
        on_host = self._on_host(device)
        scratch = self._scratch(shape[-2], shape[-1], k)
        if check_size(shape, itemsize, on_host, scratch, self._traced_only):
            self._check_empty(shape, itemsize, on_host)
        if out is None:
            return
        if "out" not in self.takes:
            msg = f"out: {self.name} arrays are immutable and cannot be filled in place"
            raise TypeError(msg)
        check_out(out, shape, dtype, self._check_out)
        if device is None:
            return
        have = self.device_of(out)
        if not self._same_device(have, device):
            msg = f"out is on device {have}; device {show(device)} was asked for"
            raise ValueError(msg)

    def _on_host(self, device: Any) -> bool:
        return False  # nothing tells where a generic namespace's devices are

    def _traced_only(self) -> bool:
        return False  # (asked only of an output too large for this machine)

    def _scratch(self, n_rows: int, n_cols: int, k: Any) -> int:
        # The reference build holds an (R, C) index difference and mask.
        return n_rows * n_cols * 9

    def _check_empty(
        self, shape: tuple[int, ...], itemsize: int, on_host: bool
    ) -> None:
        # By default the strides (in bytes, as NumPy counts them) multiply
        # out every nonzero dimension, and must fit in int64.
        _size.refuse_span(shape, math.prod(d for d in shape if d) * itemsize, "bytes")

    def _check_out(self, out: Any) -> tuple[int, ...] | None:
        return None  # no strides told: it copies on write

    def _same_device(self, have: Any, want: Any) -> bool:
        return bool(have == want)

    # ------------------------------------------------------------ build

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        """A NumPy array with ``x``'s values (copied to the host if needed)."""
        return np.asarray(x)

    def small_eye(
        self, shape: tuple[Any, ...] | None, k: Any, dtype: Any, like: Any, device: Any
    ) -> Any:
        """The common small call, built at once, or None for the general path.

        Called before any validation with the caller's own arguments, and no
        ``out``, ``chunks`` or ``order``: from `eye`, ``shape`` is
        ``(*batch_shape, n_rows, n_cols)``, ``like`` None and ``device`` the
        caller's (None: the default); from `eye_like`, ``shape`` is None and
        ``like`` is its ``x`` (of this library, of any rank), with ``dtype``
        defaulting to ``x.dtype``. A backend may answer only where no check
        of the general path could fail and it builds exactly what that path
        would (the tests compare the two on the fuzzers' inputs). By
        default it declines."""
        return None

    def eye(self, build: Build) -> Any:
        """The batched eye ``build`` asks for (or its ``out``, filled)."""
        return array_api_eye(
            self._xp, build.shape, build.k, build.dtype, build.device, build.out
        )
