"""The PyTorch backend: torch's rules (what only eager calls ask: in
``facts``), its short path (`TorchBackend.short_eye`), and its builds, by
torch's own idioms (in ``build``; tensor subclasses: ``subclass``).

torch.compile traces this code into the caller's graph, and checks every
compiled call against guards on whatever the tracing read. Four rules keep
those guards few and never failing (the registry, which finds this backend,
keeps them too):

1. Nothing is made or filled on the first compiled call (it would fail the
   guards of the second, which compiles again): this backend has no state
   and exists from import, and torch itself is read from ``sys.modules``.
2. No table that grows (a dict, a cache) is read on a tensor's path: each
   lookup is a guard, which the next entry fails. Tensors, the namespace
   and dtypes are known from names and the dtype's own properties; what is
   read is fixed at import (a backend's ``takes``, a frozenset).
3. A value is read through as few attributes as can be: each link of a
   chain (a module's constant, a property) is one more guard.
4. No size and no ``k`` is compared, nor given to a call that compares it
   (``diagonal(k)``): where they are known only when the program runs
   (dynamic and automatic dynamic compiles), tracing shows them as ints,
   and each comparison is a guard the next value fails, one compile each.
   The short path runs the gate's form that compares neither
   (``admit_traced``), and every build while compiling is the mask. (One
   exception: an ``out`` that is not contiguous has its strides compared
   with its sizes, to tell whether they nest.)
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ..._validate import size as _size
from ..._validate.dtypes import DTypeError
from ..._validate.gate import admit, admit_traced
from ..._validate.text import show
from .._base import Backend, Build, Shape
from .build import (
    general,
    mask,
    plain_dtype,
    refuse_meta_k,
    scalar_k,
    short_per_matrix_eye,
    wide_unsigned,
)
from .facts import (
    TORCH_REFUSALS,
    check_device,
    dtype_table,
    is_tensor_type,
    refuse_eager_out,
    storage_span,
    to_host,
)
from .subclass import build as _subclass_build
from .subclass import builds_plain, held_bytes

__all__ = ["TORCH", "TorchBackend", "is_tensor_type"]

_NDARRAY = np.ndarray


class TorchBackend(Backend):
    """PyTorch: CPU, CUDA, MPS or meta tensors, strided and mutable."""

    name = "torch"
    namespaces = ("torch", "array_api_compat.torch")
    takes = frozenset({"out"})
    _host_memory = None  # CPU tensors are; CUDA, MPS and meta ones are not

    def __init__(self) -> None:
        # No state at all, made when eyelike is imported (guard rule 1).
        # torch is read from sys.modules (~0.1 us; an import statement costs
        # twice that, and torch.compile refuses importlib): a tensor or torch
        # namespace in hand, or torch.compile running, means it is there.
        pass

    @property
    def _xp(self) -> Any:
        # An import statement: this wrapper may first be imported while
        # torch.compile traces, where a sys.modules miss would be a guard
        # that fails at once (rule 1). (Only the general path reads it.)
        import array_api_compat.torch as compat

        return compat

    @property
    def _torch(self) -> Any:
        found = sys.modules.get("torch")
        if found is not None:
            return found
        import torch

        return torch

    def device(self, device: Any) -> Any:
        torch = self._torch
        try:
            dev = torch.device(device)
        except (RuntimeError, TypeError, ValueError):
            msg = f"device {show(device)} is not a torch device"
            raise ValueError(msg) from None
        if dev.type not in ("cpu", "meta"):
            check_device(torch, dev, device)
        return dev

    def shape_of(self, x: Any, name: str) -> tuple[int, ...]:
        if x.is_nested:
            msg = (
                f"{name} is a nested tensor: its matrices have no one shape; "
                f"give each its own eye (or x.to_padded_tensor(0))"
            )
            raise ValueError(msg)
        # Always known; under torch.compile(dynamic=True) its entries are
        # symbolic ints, which stay symbolic here. A torch.Size is a tuple.
        return x.shape  # type: ignore[no-any-return]

    def device_of(self, x: Any) -> Any:
        return x.device

    def dtype(self, dtype: Any, device: Any) -> tuple[Any, int]:
        # Not the table (guard rule 2): torch has all of these dtypes on
        # these devices, which the dtype's own properties tell.
        torch = self._torch
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
        if torch.compiler.is_compiling():
            # Not the cache either, a table that grows (guard rule 2): the
            # entry this call would add fails the next call's guard.
            return self._from_table(dtype, device)
        return super().dtype(dtype, device)

    def _dtype_table(self, device: Any) -> dict[str, Any]:
        return dtype_table(self._torch)

    def _own_k(self, k: Any) -> Any:
        if (
            isinstance(k, _NDARRAY)
            and (k.ndim or not self._torch.compiler.is_exporting())
            and self._torch.compiler.is_dynamo_compiling()
        ):
            # Dynamo traces a NumPy value (a scalar too) as a tensor, whose
            # dtype it reads only as one: checked and clamped as a tensor k.
            return self._torch.as_tensor(k)
        return k

    def _clamp(self, k: Any, n_rows: int, n_cols: int, device: Any) -> Any:
        # Moved as the base class's `_move_k` says, written here (one method,
        # not two: each is one more guard of a compiled call).
        torch = self._torch
        refuse_meta_k(torch, k, device)
        if device is None and not torch.compiler.is_compiling():
            device = torch.get_default_device()  # (not readable there)
        if device is not None and k.device != device:
            k = k.to(device)
        # In int64 first: torch's CPU kernels lack clamp for uint16-64, and
        # bounds beyond a narrow type would not fit it. uint64 values
        # >= 2**63 wrap negative and are all beyond the matrix.
        wide = k.to(torch.int64)
        if wide_unsigned(k.dtype) and k.dtype.itemsize == 8:
            wide = torch.where(wide < 0, n_cols, wide)
        return wide.clamp(-n_rows, n_cols)

    def _same_device(self, have: Any, want: Any) -> bool:
        # torch.device("cuda") means the current CUDA device: an out of that
        # type is on it.
        return bool(have == want) or (want.index is None and have.type == want.type)

    def _on_host(self, device: Any) -> bool:
        return device is None or device.type == "cpu"

    def _traced_only(self) -> bool:
        # torch.export, a FakeTensorMode, or a meta default device: tensors
        # without storage. (torch.compile's program allocates when it runs,
        # here: checked while tracing, as eagerly.)
        torch = self._torch
        if torch.compiler.is_compiling():
            return bool(torch.compiler.is_exporting())
        probe = torch.empty(0)
        return type(probe) is not torch.Tensor or bool(probe.is_meta)

    def _held_bytes(self, of: Any, shape: tuple[int, ...], nbytes: int) -> int:
        # A DTensor's rank holds its own shard.
        plain = of is None or builds_plain(self._torch, type(of))
        return nbytes if plain else held_bytes(of, shape, nbytes)

    def _check_empty(self, shape: tuple[int, ...], itemsize: int, device: Any) -> None:
        _size.refuse_span(shape, storage_span(shape), "elements")

    def _out_strides(self, out: Any) -> tuple[int, ...] | None:
        # What torch itself would refuse only once writing had begun. (An
        # import statement: one guard, guard rule 3.)
        import torch

        if out.is_nested or out.layout != torch.strided:
            msg = (
                f"out must be a dense (strided) tensor; got a "
                f"{'nested' if out.is_nested else str(out.layout)} tensor"
            )
            raise TypeError(msg)
        if out.requires_grad and torch.is_grad_enabled():
            msg = (
                "out requires grad: autograd cannot track an in-place fill of "
                "it (under torch.no_grad() it can be filled, as "
                "torch.nn.init.eye_ fills a weight)"
            )
            raise ValueError(msg)
        if not torch.compiler.is_dynamo_compiling():  # where neither can be asked
            refuse_eager_out(torch, out)
        # Contiguous, so no two elements alias: no strides to sort (which
        # torch.compile cannot, when they are symbolic).
        return None if out.is_contiguous() else tuple(out.stride())

    def _check_unnested(self, shape: tuple[int, ...], strides: tuple[int, ...]) -> None:
        # Such a layout is checked element by element, by NumPy, which Dynamo
        # cannot trace: refused by name, not by its graph break (a raw error
        # under fullgraph).
        if self._torch.compiler.is_dynamo_compiling():
            msg = (
                f"out's layout (strides {strides} for shape {shape}) does not "
                f"nest, and eyelike checks such a layout for elements that "
                f"share memory element by element, which torch.compile cannot "
                f"trace; pass an out whose strides nest (any transpose or "
                f"slice of a contiguous tensor), or copy the result into it"
            )
            raise ValueError(msg)

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        return to_host(self._torch, x)

    def _short_shape(self, x: Any) -> Shape | None:
        # (A nested tensor has no one shape; its other rules: `short_eye`.)
        return None if x.is_nested else x.shape

    def short_eye(
        self, shape: Shape, k: Any, dtype: Any, like: Any, device: Any, out: Any
    ) -> Any:
        # torch.eye(3) costs about 1.2 us, and each check here 0.03-0.1 us:
        # the calls clients make (kornia's ``eye(3, device=x.device,
        # dtype=x.dtype)``, ``eye_like(x)``) are checked in this one
        # function, each fact read once. An import statement, not
        # `self._torch`: one guard, not ten (guard rule 3). (``out`` is
        # always None here: `_short_out` is False.)
        import torch

        # The gate first: under torch.compile, where the sizes and k may be
        # known only when the program runs (and look like ints to the
        # tracing), its form that compares neither (a guard the next k or
        # batch fails: one compile each); built below as the mask for the
        # same reason (guard rule 4).
        # A k that is not an int: one offset per matrix, built below; under
        # torch.compile the general path's, which keeps its guards few.
        traced = torch.compiler.is_dynamo_compiling()
        per_matrix = type(k) is not int
        if per_matrix and traced:
            return None
        k = admit_traced(shape, k) if traced else admit(shape, k)
        if k is None:
            return None
        # A plain dtype (`plain_dtype`, a float's case first: the clients').
        # ``floating``: given, and floating (torch's default is too, but
        # torch.eye parses no keyword faster).
        floating = False
        if dtype is not None:
            if not traced and type(dtype) is str:
                # A name, read once by the dtype rule (remembered per
                # spelling: not under torch.compile, guard rule 2; nor is
                # ``str`` read there, one guard more).
                try:
                    dtype = self.dtype(dtype, None)[0]
                except DTypeError:
                    return None  # the general path says why, in its order
            if type(dtype) is not torch.dtype:
                return None
            floating = dtype.is_floating_point
            if not (dtype.itemsize > 1 if floating else plain_dtype(torch, dtype)):
                return None
        if like is not None:
            # A plain tensor (a subclass's rules are the general path's), on
            # a device that holds tensors here, and so takes one.
            if (
                type(like) is not torch.Tensor and not builds_plain(torch, type(like))
            ) or not (like.is_cpu or like.is_cuda or like.is_meta):
                return None
            device = like.device
        elif device is not None and type(device) is not torch.device:
            if traced or type(device) is not str:
                # An index; or a name while Dynamo traces, which would make
                # a fake tensor of it unchecked: the general path reads it.
                return None
            try:
                device = torch.device(device)  # checked on what is made
            except RuntimeError:
                return None  # not a device's name: the general path says so
        if per_matrix:
            return short_per_matrix_eye(torch, shape, k, dtype, device)
        # scalar_k's first case, at once: the client's own call (one count,
        # one fewer for torch to parse).
        square = False
        if traced:
            # (No comparison: the mask below. Its views fail on a fake
            # tensor of a device this build lacks, so that is asked first.)
            if not (
                like is not None
                or device is None
                or device.type == "cpu"
                or device.type == "meta"
                or (device.type == "cuda" and torch.cuda.is_available())
            ):
                return None
        elif k == 0 and floating and len(shape) == 2:
            n_rows, n_cols = shape
            square = n_rows == n_cols
        # The device is checked on what was made: ``device.type`` costs
        # 0.2 us (a new string each time), and a CPU device kept here to
        # compare with would be state that torch.compile's guards read
        # (guard rule 1). Where torch refuses a device or a dtype on it
        # eagerly, the general path says why, in this package's words;
        # torch.compile makes a fake tensor instead, whose device is asked
        # about below, as the general path asks.
        try:
            if traced:
                made = mask(torch, shape, k, dtype, device, None)
            elif square:
                made = torch.eye(n_rows, dtype=dtype, device=device)
            else:
                made = scalar_k(torch, shape, k, dtype, device, None)
        except TORCH_REFUSALS:
            return None
        if like is not None or device is None or made.is_cpu or made.is_meta:
            return made
        # A plain tensor made eagerly on CUDA proves CUDA works; a fake one
        # (torch.compile's, a FakeTensorMode's) proves nothing, and
        # torch.cuda.is_available() costs ~1-4 us a call (it reads the
        # environment each time).
        if made.is_cuda and (
            (not traced and type(made) is torch.Tensor) or torch.cuda.is_available()
        ):
            return made
        return None

    def eye(self, build: Build) -> Any:
        of = build.like if build.out is None else build.out
        if of is not None and not builds_plain(self._torch, type(of)):
            return _subclass_build(self._torch, build, self._plain)
        return self._plain(build)

    def _plain(self, build: Build) -> Any:
        shape, k, dtype, device = build.shape, build.k, build.dtype, build.device
        return general(self._torch, shape, k, dtype, device, build.out)


TORCH = TorchBackend()
