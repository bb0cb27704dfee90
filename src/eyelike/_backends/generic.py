"""Any other Array API namespace, used through what it has: the contract's
defaults and the reference build (``reference``). Memory is judged by what
the result will hold, told from a one-element probe (`_kind`).
"""

from __future__ import annotations

import contextlib
import math
from types import ModuleType
from typing import Any

import numpy as np

from .._validate.dtypes import EXTRA_NAMES, STANDARD_NAMES
from .._validate.text import show
from ._base import Backend, Build, namespace_info
from .reference import array_api_eye, on

__all__ = ["GenericBackend"]

# DLPack's device type of host memory (kDLCPU).
_DLPACK_CPU = 1
# Bytes a sparse format stores per entry beside its value: one int64
# coordinate per dimension (COO's; CSR/GCXS store fewer).
_INDEX_BYTES = 8


class GenericBackend(Backend):
    """A namespace eyelike has no module for, named after it."""

    def __init__(self, xp: ModuleType | None = None) -> None:
        if xp is not None:  # (else a subclass's own, `Backend._xp`)
            self._xp = xp
            self.name = str(getattr(xp, "__name__", "array_api"))
        self._storage: dict[Any, str] = {}

    def device(self, device: Any) -> Any:
        # One the namespace lists, else refused by name: never dropped (as
        # ndonnx drops one), nor refused in the library's words (sparse's).
        devices = self._devices()
        if devices and not any(self._same_device(device, d) for d in devices):
            msg = f"device {show(device)} is not one of {devices}"
            raise ValueError(msg)
        return device

    def _devices(self) -> list[Any]:
        """Its devices, the default first; none known where it has no
        inspection API (the standard's before 2023.12)."""
        info = namespace_info(self._xp)
        if info is None:
            return []
        default = info.default_device()
        return [default, *(d for d in info.devices() if d != default)]

    def device_of(self, x: Any) -> Any:
        # (mlx's arrays have no device attribute: the namespace's default.)
        return getattr(x, "device", None)

    def shape_of(self, x: Any, name: str) -> tuple[int, ...]:
        # A lazy namespace may not know a size yet (None): a batch size or a
        # k's, but the matrix's must be known, to build its rows and columns.
        shape = tuple(x.shape)
        if None not in shape or (
            name == "x" and len(shape) >= 2 and None in shape[-2:]
        ):
            return super().shape_of(x, name)
        return shape

    def eye(self, build: Build) -> Any:
        return array_api_eye(self, build)

    def _own_k(self, k: Any) -> Any:
        # Without arange no mask can be built: a k array's values, read on
        # the host, build each offset's eye (pydata sparse's). A lazy k has
        # none to read: refused at the build, naming what is missing.
        if hasattr(self._xp, "arange") or isinstance(k, (int, np.ndarray)):
            return k
        if hasattr(k, "shape") and self._kind(None) != "other":
            return self.to_numpy(k)
        return k

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        # The standard's exchange (dense arrays on the host); else sparse's
        # todense, ndonnx's unwrap_numpy, or NumPy's own conversion.
        try:
            return np.from_dlpack(x)
        except (AttributeError, BufferError, RuntimeError, TypeError, ValueError):
            pass
        for name in ("todense", "unwrap_numpy"):
            method = getattr(x, name, None)
            if callable(method):
                return np.asarray(method())
        return np.asarray(x)

    def _dtype_table(self, device: Any) -> dict[str, Any]:
        # The inspection API's, and on the default device (or any, without
        # one) each dtype the namespace names that it calls numeric (ndonnx
        # has float16 and does not list it).
        info = namespace_info(self._xp)
        table = {} if info is None else super()._dtype_table(device)
        if (
            info is None
            or device is None
            or self._same_device(device, info.default_device())
        ):
            xp = self._xp
            for name in STANDARD_NAMES + EXTRA_NAMES:
                dt = getattr(xp, name, None)
                if name not in table and dt is not None and _numeric(xp, dt):
                    table[name] = dt
        return table

    def _held_bytes(
        self, of: Any, shape: tuple[int, ...], nbytes: int, device: Any
    ) -> int:
        # A dense array on the host by its size; a sparse one by its ones;
        # any other, lazy or on a device, not at all.
        kind = "dense" if self._host_memory else self._kind(device)
        if kind != "sparse":
            return nbytes if kind == "dense" else 0
        # At most one stored entry per one: min(R, C) in each matrix.
        itemsize = nbytes // math.prod(shape)
        ones = math.prod(shape[:-2]) * min(shape[-2:])
        return ones * (itemsize + _INDEX_BYTES * len(shape))

    def _kind(self, device: Any) -> str:
        """The namespace's arrays on ``device``, from a one-element probe:
        "sparse" (it counts its stored entries, ``nnz``), "dense" (its
        DLPack device is the host's, or it holds host values without DLPack,
        as ndonnx's computed ones), or "other" (lazy, a device's)."""
        found = self._storage.get(device)
        if found is None:
            probe = self._xp.zeros((1,), **on(device))
            found = "sparse" if hasattr(probe, "nnz") else "other"
            try:
                if found == "other" and probe.__dlpack_device__()[0] == _DLPACK_CPU:
                    found = "dense"
            except Exception:  # no DLPack, or no values yet (lazy)
                if callable(getattr(probe, "unwrap_numpy", None)):
                    with contextlib.suppress(Exception):
                        probe.unwrap_numpy()
                        found = "dense"
            self._storage[device] = found
        return found


def _numeric(xp: Any, dtype: Any) -> bool:
    """Whether the namespace's ``isdtype`` calls ``dtype`` bool or numeric."""
    try:
        return bool(xp.isdtype(dtype, ("bool", "numeric")))
    except (TypeError, ValueError, AttributeError):
        return False
