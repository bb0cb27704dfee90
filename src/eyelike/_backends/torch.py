"""The PyTorch backend: the library's rules, and torch's own idioms for a
scalar offset: ``torch.eye`` (or ``zeros`` and a diagonal fill) for one
matrix, copied over a batch. Per-matrix offsets: the ones written at
computed indices, or a mask under ``torch.compile``. A small call with plain
arguments takes a short path (`TorchBackend.small_eye`) straight to them."""

from __future__ import annotations

import itertools
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

__all__ = ["TorchBackend"]

# Matrices up to this many elements are made once and copied over a batch;
# the template is then at most 4 MiB beside the output (complex128).
_SMALL_MATRIX = 1 << 18
# What the short path takes (a name here: one guard under torch.compile,
# where reading it through its module is two).
_SMALL_ELEMENTS = _size.SMALL_ELEMENTS
# Per-matrix offsets are written by index up to this many ones (scratch about
# 48 MiB), by a mask beyond.
_INDEXED_ONES = 1 << 20


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
        if dev.type not in ("cpu", "meta") and not _has_device_type(torch, dev.type):
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
            and _plain_dtype(torch, dtype)
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
        _size.refuse_span(shape, _storage_span(shape), "elements")

    def clamp_offsets(self, k: Any, n_rows: int, n_cols: int) -> Any:
        # In int64 first: torch's CPU kernels lack clamp for uint16-64, and
        # bounds beyond a narrow type would not fit it. uint64 values
        # >= 2**63 wrap negative and are all beyond the matrix.
        wide = k.to(self.library.int64)
        if _wide_unsigned(k.dtype) and k.dtype.itemsize == 8:
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
            dtype is None or (type(dtype) is torch.dtype and _plain_dtype(torch, dtype))
        ):
            return None
        if like is None:
            if not is_small(shape):
                return None
            return _scalar_k(torch, shape, k, dtype, None, None)
        # ``like`` exists, so torch can make its shape: only the size counts
        # (not symbolic, as under torch.compile(dynamic=True), nor empty).
        n = like.numel()
        if (
            type(n) is not int
            or not 0 < n <= _SMALL_ELEMENTS
            or not (like.is_cpu or like.is_cuda or like.is_meta)
        ):
            return None
        return _scalar_k(torch, shape, k, dtype, like.device, None)

    def eye(self, build: Build) -> Any:
        shape, k, dtype, device, out = build[:5]
        if not isinstance(k, int):
            return _per_matrix(self.library, shape, k, dtype, device, out)
        return _scalar_k(self.library, shape, k, dtype, device, out)


_BACKEND = TorchBackend()
TorchBackend.shared_instance = _BACKEND


def _scalar_k(
    torch: Any, shape: tuple[int, ...], k: int, dtype: Any, device: Any, out: Any
) -> Any:
    """One offset for every matrix (``dtype``, ``device`` None: torch's
    defaults)."""
    # Indexed, not sliced: slicing a torch.Size costs ~0.2 us each time.
    n_rows, n_cols = shape[-2], shape[-1]
    batch = len(shape) > 2
    if batch and n_rows * n_cols > _SMALL_MATRIX:
        # A large matrix is not worth a template: write in place.
        if out is None:
            out = torch.zeros(shape, dtype=dtype, device=device)
        else:
            out.zero_()
        if out.numel():
            out.diagonal(k, -2, -1).fill_(1)
        return out
    # One matrix, made by torch's own eye where it can (one kernel: the
    # cheapest call torch has), then copied over the batch: torch's own
    # idiom, faster than zeros plus a strided diagonal fill.
    if k == 0 and dtype is None and device is None:
        # No keywords: torch parses each, at ~0.25 us, as much as the rest.
        matrix = torch.eye(n_rows, n_cols)
    elif k == 0 and (
        dtype is None or dtype.is_floating_point or not _wide_unsigned(dtype)
    ):
        matrix = torch.eye(n_rows, n_cols, dtype=dtype, device=device)
    else:  # torch.eye has no offset, nor uint16-64 on the CPU
        matrix = torch.zeros((n_rows, n_cols), dtype=dtype, device=device)
        if -n_rows < k < n_cols:
            matrix.diagonal(k).fill_(1)
    if out is not None:
        return out.copy_(matrix)  # broadcast over the batch: one pass
    # ``clone`` of an expanded view: a fresh, contiguous, writeable batch.
    # (The sizes one by one: a torch.Size or tuple costs torch ~2 us more.)
    return matrix.expand(*shape).clone() if batch else matrix


def _per_matrix(
    torch: Any, shape: tuple[int, ...], k: Any, dtype: Any, device: Any, out: Any
) -> Any:
    """One offset per matrix.

    Eagerly: zeros, then the ones written at their computed (matrix, row,
    column) indices, about as many writes as there are ones. Under
    torch.compile, whose graph cannot hold the data-dependent count of ones,
    and on tensors with no values to count (meta tensors, a FakeTensorMode's
    fakes), the mask ``col - row == k[b]`` instead, which inductor fuses
    into one kernel (and eagerly too past ``_INDEXED_ONES`` ones).
    """
    if math.prod(shape) == 0:  # nothing to write: no index scratch either
        return torch.zeros(shape, dtype=dtype, device=device) if out is None else out
    n_rows, n_cols = shape[-2:]
    batch = shape[:-2]
    offsets = torch.as_tensor(k, dtype=torch.int64, device=device)
    # The index arrays hold about six int64 per one: past a million ones the
    # mask (one byte an element) is the lighter of the two. torch's CPU
    # kernels have no index_put for uint16-64.
    ones = math.prod(batch) * min(n_rows, n_cols)
    if (
        torch.compiler.is_compiling()
        or ones > _INDEXED_ONES
        or _wide_unsigned(dtype)
        or not _has_values(torch, offsets)
    ):
        rows = torch.arange(n_rows, device=device)
        cols = torch.arange(n_cols, device=device)
        mask = (cols[None, :] - rows[:, None]) == offsets[..., None, None]
        if out is not None:
            return out.copy_(mask)  # broadcast over the batch: one pass
        # A fresh, contiguous array even where ``k`` broadcasts over the batch.
        return torch.empty(shape, dtype=dtype, device=device).copy_(mask)
    result = torch.zeros(shape, dtype=dtype, device=device) if out is None else out
    if out is not None:
        result.zero_()
    kb = offsets.expand(batch).reshape(-1)
    r0, c0 = (-kb).clamp(min=0), kb.clamp(min=0)
    lengths = torch.minimum(n_rows - r0, n_cols - c0).clamp(min=0)
    matrix = torch.repeat_interleave(torch.arange(kb.numel(), device=device), lengths)
    # Each one's position along its own diagonal: 0, 1, ... per matrix.
    run_starts = torch.cumsum(lengths, 0) - lengths
    step = torch.arange(matrix.numel(), device=device) - run_starts[matrix]
    where = (*torch.unravel_index(matrix, batch), r0[matrix] + step, c0[matrix] + step)
    result[where] = 1
    return result


def _has_values(torch: Any, t: Any) -> bool:
    """Whether ``t`` holds values a data-dependent size can be read from:
    not a meta tensor, nor a subclass such as a FakeTensorMode's fakes."""
    return type(t) is torch.Tensor and not t.is_meta


def _plain_dtype(torch: Any, dtype: Any) -> bool:
    """One of torch's numeric or bool dtypes that it has on CPU, CUDA and
    meta devices alike, known from the dtype's own properties and identity
    (constants under torch.compile, where a set or table read would be a
    guard checked on every compiled call). The float8 types and any other
    are looked up in the namespace's table instead."""
    # Comparisons, not bool(): each builtin read is one more guard.
    plain: bool
    if dtype.is_floating_point:
        plain = dtype.itemsize > 1  # float16, bfloat16, float32, float64
    elif dtype.is_complex:
        plain = dtype.itemsize > 4  # complex64, complex128 (not complex32)
    else:
        plain = dtype in (
            torch.bool,
            torch.int8,
            torch.int16,
            torch.int32,
            torch.int64,
            torch.uint8,
            torch.uint16,
            torch.uint32,
            torch.uint64,
        )
    return plain


def _wide_unsigned(dtype: Any) -> bool:
    """uint16, uint32 or uint64, which many of torch's CPU kernels lack.

    Read from the dtype's own properties: a constant under torch.compile,
    where a table lookup would be a guard checked on every compiled call.
    """
    return bool(
        not dtype.is_floating_point  # the common case decides at once
        and not dtype.is_signed
        and not dtype.is_complex
        and dtype.itemsize > 1
    )


def _has_device_type(torch: Any, kind: str) -> bool:
    backend = getattr(torch.backends, kind, None) if kind == "mps" else None
    module = backend or getattr(torch, kind, None)
    check = getattr(module, "is_available", None)
    return bool(check()) if callable(check) else False


def _storage_span(shape: tuple[int, ...]) -> int:
    """The largest number torch computes making ``shape``: its element count
    multiplied left to right (up to the first zero) and its strides."""
    strides, stride = [], 1
    for d in reversed(shape):
        strides.append(stride)
        stride *= max(d, 1)
    # torch multiplies the count in unsigned 64 bits: past 2**64 - 1 it fails.
    lead = math.prod(itertools.takewhile(bool, shape))
    return max(lead if lead >= 2**64 else 0, *strides)
