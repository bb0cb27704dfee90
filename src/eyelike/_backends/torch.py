"""The PyTorch backend: the library's rules, and torch's own idioms for a
scalar offset: ``torch.eye`` (or ``zeros`` and a diagonal fill) for one
matrix, copied over a batch. Per-matrix offsets: the ones written at
computed indices, or a mask under ``torch.compile``. A small call with plain
arguments takes a short path (`TorchBackend.small_eye`) straight to them."""

from __future__ import annotations

import math
import sys
from types import ModuleType
from typing import Any

import numpy as np

from .._validate import dtypes as _dtypes
from .._validate import size as _size
from .._validate.size import is_small
from .._validate.text import show
from ._base import Backend, Build
from .torch_eye import (
    has_device_type,
    mask,
    per_matrix,
    plain_dtype,
    scalar_k,
    storage_span,
    wide_unsigned,
)

__all__ = ["TorchBackend"]

# What the short path takes (a name here: one guard under torch.compile,
# where reading it through its module is two).
_SMALL_ELEMENTS = _size.SMALL_ELEMENTS


class TorchBackend(Backend):
    """PyTorch: CPU, CUDA, MPS or meta tensors, strided and mutable."""

    name = "torch"
    module = "torch"
    compat_module = "array_api_compat.torch"

    @staticmethod
    def recognises(xp: ModuleType) -> bool:
        # By name, as array-api-compat's is_torch_namespace does, but with no
        # cached helper for torch's compiler to warn about.
        return xp.__name__ in ("torch", "array_api_compat.torch")

    @staticmethod
    def owns_array_type(array_type: type) -> bool:
        # By name, so torch need not be imported to ask (and nothing mutable
        # is read, which torch's compiler would guard each call on).
        if array_type.__name__ == "Tensor" and array_type.__module__ == "torch":
            return True  # torch.Tensor itself: no loop for torch.compile to guard
        for c in array_type.__mro__[1:]:  # a subclass (nn.Parameter...)
            if c.__name__ == "Tensor" and c.__module__ == "torch":
                return True
        return False

    # No state at all, and made when eyelike is imported: torch.compile
    # traces this backend, and guards each compiled call on what tracing
    # read, so an instance made (or a table filled) on the first compiled
    # call would fail those guards on the second and compile it again.
    # torch is read from sys.modules (~0.1 us; an import statement costs
    # twice that, and torch.compile refuses importlib): a tensor or torch
    # namespace in hand, or torch.compile running, means it is there.

    def __init__(self) -> None:
        super().__init__(None, None)

    @classmethod
    def for_namespace(cls, xp: ModuleType | None) -> Backend:
        return _BACKEND

    @property
    def xp(self) -> Any:
        # An import statement: this wrapper may first be imported while
        # torch.compile traces, and a sys.modules miss read there would be a
        # guard that fails at once. (Only the general path reads it.)
        import array_api_compat.torch as compat

        return compat

    @property
    def library(self) -> Any:
        found = sys.modules.get("torch")
        if found is not None:
            return found
        import torch

        return torch

    def resolve_device(self, device: Any) -> Any:
        torch = self.library
        try:
            dev = torch.device(device)
        except (RuntimeError, TypeError, ValueError):
            msg = f"device {show(device)} is not a torch device"
            raise ValueError(msg) from None
        if dev.type not in ("cpu", "meta") and not has_device_type(torch, dev.type):
            msg = f"device {show(device)}: this torch build has no {dev.type} device"
            raise ValueError(msg)
        return dev

    def shape_of(self, x: Any, name: str) -> tuple[int, ...]:
        # Always known; under torch.compile(dynamic=True) its entries are
        # symbolic ints, which stay symbolic here. A torch.Size is a tuple.
        return x.shape  # type: ignore[no-any-return]

    def device_of(self, x: Any) -> Any:
        return x.device

    def same_device(self, have: Any, want: Any) -> bool:
        if have == want:
            return True
        # torch.device("cuda") means the current CUDA device: match on type.
        return want.index is None and have.type == want.type

    def on_host(self, device: Any) -> bool:
        return device is None or device.type == "cpu"

    def native_dtype(self, dtype: Any, device: Any) -> tuple[Any, int] | None:
        # Under torch.compile every table lookup would become a guard checked
        # on each compiled call; torch has all of these dtypes on these
        # devices, so a set membership decides.
        torch = self.library
        if dtype is None:
            # Read on every call, never cached: torch.set_default_dtype
            # changes it at any time.
            dtype = torch.get_default_dtype()
        if (
            type(dtype) is torch.dtype
            and plain_dtype(torch, dtype)
            and (device is None or device.type in ("cpu", "cuda", "meta"))
        ):
            return dtype, dtype.itemsize
        return None

    def dtype_table(self, device: Any) -> dict[str, Any]:
        table = super().dtype_table(device)
        # array-api-compat lists only the standard's set; torch has more.
        for name in _dtypes.STANDARD_NAMES + _dtypes.EXTRA_NAMES:
            dt = getattr(self.library, name, None)
            if isinstance(dt, self.library.dtype):
                table.setdefault(name, dt)
        return table

    def scratch_bytes(self, n_rows: int, n_cols: int, k: Any) -> int:
        # A per-matrix k takes the generic path, with its (R, C) temporaries.
        return 0 if isinstance(k, int) else super().scratch_bytes(n_rows, n_cols, k)

    def check_empty_shape(
        self, shape: tuple[int, ...], itemsize: int, on_host: bool
    ) -> None:
        _size.refuse_span(shape, storage_span(shape), "elements")

    def clamp_offsets(self, k: Any, n_rows: int, n_cols: int) -> Any:
        # In int64 first: torch's CPU kernels lack clamp for uint16-64, and
        # bounds beyond a narrow type would not fit it. uint64 values
        # >= 2**63 wrap negative and are all beyond the matrix.
        wide = k.to(self.library.int64)
        if wide_unsigned(k.dtype) and k.dtype.itemsize == 8:
            wide = self.library.where(wide < 0, n_cols, wide)
        return wide.clamp(-n_rows, n_cols)

    def strides(self, out: Any) -> tuple[int, ...] | None:
        return tuple(out.stride())

    def check_writeable(self, out: Any) -> None:
        if out.requires_grad:
            msg = "out requires grad: autograd cannot track an in-place fill of it"
            raise ValueError(msg)

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        x = x.detach().cpu()
        try:
            return np.asarray(x.numpy())
        except TypeError:  # bfloat16, float8: NumPy has no such type
            return np.asarray(x.to(self.library.float32).numpy())

    def small_eye(self, shape: tuple[Any, ...], k: Any, dtype: Any, like: Any) -> Any:
        # torch.eye(3) costs about 2 us, less than the general path's checks:
        # a plain int k, a dtype `native_dtype` takes at once, and a small
        # size on a CPU, CUDA or meta device pass every one of them.
        # dtype None stays None: torch's default (a floating type, so plain).
        # An import statement, not `self.library`: under torch.compile that
        # property is a chain of ten guards checked on every call, this one.
        import torch

        if type(k) is not int or not (
            dtype is None or (type(dtype) is torch.dtype and plain_dtype(torch, dtype))
        ):
            return None
        if like is None:
            if not is_small(shape):
                return None
            return scalar_k(torch, shape, k, dtype, None, None)
        # ``like`` exists, so torch can make its shape: only the size counts
        # (not symbolic, as under torch.compile(dynamic=True), nor empty).
        n = like.numel()
        if (
            type(n) is not int
            or not 0 < n <= _SMALL_ELEMENTS
            or not (like.is_cpu or like.is_cuda or like.is_meta)
        ):
            return None
        return scalar_k(torch, shape, k, dtype, like.device, None)

    def eye(self, build: Build) -> Any:
        shape, k, dtype, device = build.shape, build.k, build.dtype, build.device
        out = build.out
        if type(math.prod(shape)) is not int:
            # Sizes known only when the program runs (torch.export, dynamic
            # compile): the one build that compares none of them.
            return mask(self.library, shape, k, dtype, device, out)
        if not isinstance(k, int):
            return per_matrix(self.library, shape, k, dtype, device, out)
        return scalar_k(self.library, shape, k, dtype, device, out)


_BACKEND = TorchBackend()
TorchBackend.shared_instance = _BACKEND
