"""The backend contract: what eyelike must know of an array library.

Each library is one subclass of `Backend` in its own module of this package
(``numpy``, ``cupy``, ``torch``, ``jax``, ``dask``, ``array_api_strict``,
and ``generic`` for any other Array API namespace), listed once in the
registry (this package's ``__init__``). The front end validates every
argument through these methods and then calls `Backend.eye`; it never asks
which library it is talking to.

The defaults here are those of a generic Array API namespace: devices and
dtypes as its inspection API reports them, no writes in place assumed, no
strides known. A backend overrides what its library does differently.
"""

from __future__ import annotations

import importlib
import math
from types import ModuleType
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np
from array_api_compat import device as array_device

from .._validate import dtypes as _dtypes
from .._validate import size as _size
from .._validate.integers import is_symbolic
from .reference import array_api_eye

__all__ = ["Backend", "Build"]


class Build(NamedTuple):
    """One request for `Backend.eye`, every argument validated.

    Attributes
    ----------
    shape
        ``(*batch_shape, n_rows, n_cols)``.
    k
        A Python int, or an integer array of the backend's library
        broadcastable to the batch dimensions, clamped into
        ``[-n_rows, n_cols]``.
    dtype, device
        The backend's own dtype object and device (None: its default).
    out
        The array to fill, or None for a fresh one.
    chunks
        Dask's chunks along the batch dimensions (None: the default).
    like
        `eye_like`'s ``x``, or None.
    order
        ``"C"`` or ``"F"``: the memory layout of a fresh result (only
        backends with ``takes_order`` are asked for ``"F"``).
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
    """One array library, as the front end sees it.

    Attributes
    ----------
    name
        The library's name in messages (``"numpy"``, ``"torch"``...).
    module
        The import name of the namespace a user passes as ``xp=``, or None
        for the generic path (used by the command line and the tests).
    compat_module
        array-api-compat's wrapper of the library, where it needs one to
        follow the standard.
    needs_gpu
        Whether the library computes on a GPU only.
    mutable
        Whether its arrays can be filled in place (``out=``).
    takes_chunks
        Whether ``eye(..., chunks=)`` means something to it.
    takes_order
        Whether its arrays have a memory order (``eye(..., order="F")``).
    xp
        A namespace that follows the Array API standard (array-api-compat's
        wrapper where the library itself does not).
    library
        The library's own module, where its dtype objects live.
    """

    name: str = "array_api"
    module: ClassVar[str | None] = None
    compat_module: ClassVar[str | None] = None
    needs_gpu: ClassVar[bool] = False
    mutable: ClassVar[bool] = True
    takes_chunks: ClassVar[bool] = False
    takes_order: ClassVar[bool] = False
    # Appended to the error for a standard dtype the device lacks.
    dtype_hint: ClassVar[str] = ""
    # Dtypes are NumPy's (ml_dtypes' included), read by NumPy's parser, the
    # same on every device; else looked up in the namespace's table.
    numpy_dtypes: ClassVar[bool] = False
    # The one instance the registry hands out for this library.
    shared_instance: ClassVar[Backend | None] = None

    def __init__(self, xp: Any, library: Any) -> None:
        self._xp = xp
        self._library = library

    @property
    def xp(self) -> Any:
        return self._xp

    @property
    def library(self) -> Any:
        return self._library

    def __repr__(self) -> str:
        return f"<eyelike backend {self.name}>"

    @staticmethod
    def recognises(xp: ModuleType) -> bool:
        """Whether ``xp`` (a module) is this library's namespace."""
        return False

    @classmethod
    def for_namespace(cls, xp: ModuleType | None) -> Backend:
        """The backend instance for ``xp`` (None: the library's own), which
        imports the library if needed."""
        if cls.module is None:
            return cls(xp, xp)
        library = importlib.import_module(cls.module)
        if cls.compat_module is None:
            return cls(library, library)
        return cls(importlib.import_module(cls.compat_module), library)

    # ---------------------------------------------------------- devices

    def resolve_device(self, device: Any) -> Any:
        """Check a caller's ``device`` (not None); returns the value to pass on.

        Raises
        ------
        ValueError
            ``device`` is not a device of this library here.
        """
        return device

    def shape_of(self, x: Any, name: str) -> tuple[int, ...]:
        """``x``'s shape as a tuple of ints, or of sizes known only when the
        program runs (`is_symbolic`: ``jax.export``'s, torch's ``SymInt``).
        ``name`` is for errors.

        Raises
        ------
        ValueError
            A lazy array whose shape is not known yet (None or nan entries).
        """
        shape = tuple(x.shape)
        if not all(isinstance(d, int) or is_symbolic(d) for d in shape):
            hint = self.unknown_shape_hint(name)
            msg = f"{name} must have a known shape; got {shape}{hint}"
            raise ValueError(msg)
        return shape

    def unknown_shape_hint(self, name: str) -> str:
        """How to make a shape known, for the error `shape_of` raises."""
        return ""

    def device_of(self, x: Any) -> Any:
        """The device an array of this library lives on."""
        return array_device(x)

    def same_device(self, have: Any, want: Any) -> bool:
        """Whether an array on ``have`` satisfies a request for ``want``."""
        return bool(have == want)

    def on_host(self, device: Any) -> bool:
        """Whether an output on ``device`` lives in this machine's memory."""
        return False

    # ----------------------------------------------------------- dtypes

    def dtype_cache_key(self, device: Any) -> Any:
        """What, besides the spelling, decides `resolve_dtype`'s answer."""
        return None if self.numpy_dtypes else device

    def native_dtype(self, dtype: Any, device: Any) -> tuple[Any, int] | None:
        """``dtype`` and its size where it is plainly one of the library's own
        dtype objects, known good on ``device`` without a lookup; else None.
        """
        return None

    def dtype_table(self, device: Any) -> dict[str, Any]:
        """Name -> dtype object for every numeric dtype offered on ``device``."""
        info = self.xp.__array_namespace_info__()
        return dict(info.dtypes(device=device, kind=("bool", "numeric")))

    def resolve_dtype(self, dtype: Any, device: Any) -> tuple[Any, int]:
        """The dtype object ``dtype`` means here (None: the default), and its
        item size in bytes. Called through `_dtypes.resolve`, which caches."""
        if self.numpy_dtypes:
            dt = _dtypes.from_numpy(dtype, self.name)
            return dt, dt.itemsize
        if dtype is None:
            info = self.xp.__array_namespace_info__()
            dtype = info.default_dtypes(device=device)["real floating"]
        table = self.dtype_table(device)
        return _dtypes.from_table(dtype, table, self.name, self.dtype_hint)

    def index_dtype(self, device: Any) -> Any:
        """The namespace's default index dtype on ``device``."""
        info = self.xp.__array_namespace_info__()
        return info.default_dtypes(device=device)["indexing"]

    # ------------------------------------------------------------ sizes

    def scratch_bytes(self, n_rows: int, n_cols: int, k: Any) -> int:
        """Temporary memory beyond the output (the generic path holds an
        (R, C) index difference and mask)."""
        return n_rows * n_cols * 9

    def check_empty_shape(
        self, shape: tuple[int, ...], itemsize: int, on_host: bool
    ) -> None:
        """Refuse a shape with no elements that the library cannot make.

        By default the strides (in bytes, as NumPy counts them) multiply out
        every nonzero dimension, and must fit in int64.
        """
        _size.refuse_span(shape, math.prod(d for d in shape if d) * itemsize, "bytes")

    # ----------------------------------------------------- offsets, out=

    def clamp_offsets(self, k: Any, n_rows: int, n_cols: int) -> Any:
        """An integer ``k`` array of this library clamped into
        ``[-n_rows, n_cols]``, in the namespace's index dtype."""
        xp = self.xp
        index = self.index_dtype(self.device_of(k))
        if not (type(n_rows) is int and type(n_cols) is int):
            # Symbolic sizes cannot be compared with k's type's bounds: in
            # the index type first, which holds them (and k's every value
            # but uint64's past 2**63).
            return xp.clip(xp.astype(k, index), -n_rows, n_cols)
        info = xp.iinfo(k.dtype)
        clamped = xp.clip(k, max(-n_rows, info.min), min(n_cols, info.max))
        return xp.astype(clamped, index)

    def strides(self, out: Any) -> tuple[int, ...] | None:
        """``out``'s strides in elements, where the library tells them (None:
        it copies on write, so nothing aliases)."""
        return None

    def check_writeable(self, out: Any) -> None:
        """Refuse an ``out`` this library would not let us write."""

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        """A NumPy array with ``x``'s values (copied to the host if needed)."""
        return np.asarray(x)

    # ------------------------------------------------------------- eye

    def small_eye(self, shape: tuple[Any, ...], k: Any, dtype: Any, like: Any) -> Any:
        """The common small call, built at once, or None for the general path.

        Called before any validation with the caller's own arguments:
        ``shape`` is ``(*batch_shape, n_rows, n_cols)``, ``like`` is
        `eye_like`'s ``x`` (else None: no ``device`` and no ``out`` were
        given). A backend may answer only where no check of the general path
        could fail and it builds exactly what that path would: the tests
        compare the two on every input the fuzzers make. By default it
        always declines.
        """
        return None

    def eye(self, build: Build) -> Any:
        """The batched eye ``build`` asks for (or its ``out``, filled)."""
        return array_api_eye(
            self.xp, build.shape, build.k, build.dtype, build.device, build.out
        )
