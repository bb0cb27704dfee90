"""The PyTorch backend: torch's rules and its short path; its builds are in
``build``, tensor subclasses' in ``subclass``.

torch.compile traces this code into the caller's graph, and guards every
compiled call on whatever the tracing read. Four rules keep those guards
few and never failing (the registry keeps them too):

1. Nothing is made or filled on the first compiled call (it would fail the
   second's guards): no state, made at import, torch read from
   ``sys.modules``.
2. No table that grows (a dict, a cache) is read on a tensor's path: each
   lookup is a guard the next entry fails. Tensors and dtypes are known
   from names and the dtype's own properties.
3. Each attribute of a chain, and each function called, is one more guard.
4. No size and no ``k`` is compared, nor given to a call that compares it
   (``diagonal(k)``): where they are known only when the program runs,
   each comparison is a guard the next value fails, one compile each. So
   the short path runs ``admit_traced``, and every build while compiling
   is the mask. (But an ``out`` that is not contiguous has its strides
   compared with its sizes, to tell whether they nest.)
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ..._validate import dtypes as _dtypes
from ..._validate import size as _size
from ..._validate.dtypes import DTypeError
from ..._validate.gate import admit, admit_offsets, admit_traced
from ..._validate.text import no_usable_device, past_count, show
from .._base import Backend, Build, Shape
from .build import clamp, general, mask, per_matrix, scalar_k, takes_mask
from .subclass import build as _subclass_build
from .subclass import builds_plain, held_bytes, is_tensor_type

__all__ = ["TORCH", "TorchBackend", "is_tensor_type"]

_NDARRAY = np.ndarray
# How torch refuses a device, or a dtype on it, when making a tensor: C++
# errors, a build without the device type, a dtype the device lacks (MPS's
# float64), no module for it.
_REFUSALS = (RuntimeError, AssertionError, TypeError, ImportError)


def plain_dtype(torch: Any, dtype: Any) -> bool:
    """One of torch's numeric or bool dtypes that it has on CPU, CUDA and
    meta devices alike, known from the dtype's properties and identity (the
    float8 types and any other: from the table)."""
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


class TorchBackend(Backend):
    """PyTorch: CPU, CUDA, MPS or meta tensors, strided and mutable."""

    name = "torch"
    namespaces = ("torch", "array_api_compat.torch")
    takes = frozenset({"out"})

    @property  # (not cached: rule 1)
    def _xp(self) -> Any:  # pyright: ignore[reportIncompatibleVariableOverride]
        # No state (guard rule 1), and an import statement: first imported
        # while tracing, a sys.modules miss is a guard that fails at once.
        import array_api_compat.torch as compat

        return compat

    @property
    def _torch(self) -> Any:
        # (Imported: a tensor or torch namespace is in hand. An import
        # statement costs twice as much, and torch.compile refuses importlib.)
        return sys.modules["torch"]

    def device(self, device: Any) -> Any:
        # A name's answer is remembered (availability costs 0.5-4 us, and a
        # usable device stays so), but not while tracing (guard rule 2).
        torch = self._torch
        named = type(device) is str and not torch.compiler.is_dynamo_compiling()
        dev = _NAMED.get(device) if named else None
        if dev is not None:
            return dev
        try:
            dev = torch.device(device)
        except (RuntimeError, TypeError, ValueError):
            msg = f"device {show(device)} is not a torch device"
            raise ValueError(msg) from None
        kind = dev.type
        if kind not in ("cpu", "meta"):
            module = getattr(torch.backends if kind == "mps" else torch, kind, None)
            available = getattr(module, "is_available", None)
            if not (callable(available) and available()):
                raise ValueError(no_usable_device("torch", kind.upper(), device))
            if kind == "cuda" and dev.index is not None:
                # (torch says "invalid device ordinal" only once allocating.)
                count = torch.cuda.device_count()
                if dev.index >= count:
                    last = f"cuda:{count - 1}"
                    raise ValueError(past_count(device, count, "cuda:0", last))
        if named and len(_NAMED) < 64:
            _NAMED[device] = dev
        return dev

    def shape_of(self, x: Any, name: str) -> tuple[int, ...]:
        if x.is_nested:
            msg = f"{name} is a nested tensor, which has no one shape"
            if name == "x":
                msg += " (x.to_padded_tensor(0) has one)"
            raise ValueError(msg)
        try:
            return x.shape  # type: ignore[no-any-return]
        except RuntimeError:  # (torch's words send the reader to load_state_dict)
            msg = f"{name} is an uninitialized parameter or buffer: no shape yet"
            raise ValueError(msg) from None

    def _short_shape(self, x: Any) -> Shape | None:
        try:
            return None if x.is_nested else x.shape
        except RuntimeError:  # a lazy module's uninitialized parameter's
            return None

    def device_of(self, x: Any) -> Any:
        return x.device

    def dtype(self, dtype: Any, device: Any) -> tuple[Any, int]:
        torch = self._torch
        if dtype is None:  # (never cached: torch.set_default_dtype changes it)
            dtype = torch.get_default_dtype()
        if (
            type(dtype) is torch.dtype
            and plain_dtype(torch, dtype)
            and (device is None or device.type in ("cpu", "cuda", "meta"))
        ):
            return dtype, dtype.itemsize
        # Remembered per spelling, but not while compiling (guard rule 2).
        key = None if torch.compiler.is_compiling() else (self, device)
        return self._from_table(dtype, device, key)

    def _dtype_table(self, device: Any) -> dict[str, Any]:
        # (Not array-api-compat's: too few, and cached up to its 1.11.)
        torch = self._torch
        names = _dtypes.STANDARD_NAMES + _dtypes.EXTRA_NAMES
        found = {name: getattr(torch, name, None) for name in names}
        return {n: dt for n, dt in found.items() if isinstance(dt, torch.dtype)}

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
        torch = self._torch
        if k.is_meta:
            where = torch.get_default_device() if device is None else device
            if where.type != "meta":
                msg = (
                    f"k is a meta tensor, which holds no values, but the result "
                    f"is made on {where}: give k on that device, or make the "
                    f"result on the meta device"
                )
                raise ValueError(msg)
        if not torch.compiler.is_compiling():  # (neither is read there)
            device = torch.get_default_device() if device is None else device
            # A sparse k by its values: torch has no clamp of a sparse layout.
            k = k if k.layout == torch.strided else k.to_dense()
        if device is not None and k.device != device:
            k = k.to(device)
        return clamp(torch, k, n_rows, n_cols)

    def _host_bounds(self, n_rows: Any, n_cols: Any) -> tuple[int, int]:
        if not self._torch.compiler.is_dynamo_compiling():
            return super()._host_bounds(n_rows, n_cols)
        # While Dynamo traces, a symbolic size reads as an int, and inductor
        # wraps traced ints past int32 (a list's): int32's range, then.
        return -(2**31 - 1), 2**31 - 1

    def _masks(self, shape: tuple[int, ...], dtype: Any, out: Any) -> bool:
        # Not eagerly where the build writes by index (~40 MiB at a time).
        import torch  # (one guard: rule 3)

        return torch.compiler.is_compiling() or takes_mask(torch, shape, dtype, out)

    def _same_device(self, have: Any, want: Any) -> bool:
        # torch.device("cuda") means the current CUDA device.
        return bool(have == want) or (want.index is None and have.type == want.type)

    def _held_bytes(
        self, of: Any, shape: tuple[int, ...], nbytes: int, device: Any
    ) -> int:
        # CPU tensors only, and none only traced: by torch.export, a
        # FakeTensorMode, or on a meta default device. (A torch.compile
        # program allocates when it runs.)
        torch = self._torch
        if device is not None and device.type != "cpu":
            return 0
        if torch.compiler.is_compiling():
            traced = torch.compiler.is_exporting()
        else:
            probe = torch.empty(0)
            traced = type(probe) is not torch.Tensor or probe.is_meta
        return 0 if traced else held_bytes(of, shape, nbytes)

    def _check_empty(self, shape: tuple[int, ...], itemsize: int, device: Any) -> None:
        # The largest number torch computes making ``shape``: its element
        # count, multiplied up to the first zero in unsigned 64 bits, or its
        # first stride (an empty dimension counted as 1).
        count, stride = 1, 1
        for d in shape:
            if not d:
                break
            count *= d
        for d in shape[1:]:
            stride *= max(d, 1)
        span = max(count if count >= 2**64 else 0, stride)
        _size.refuse_span(shape, span, "elements")

    def _out_strides(self, out: Any) -> tuple[int, ...] | None:
        # What torch would refuse only once writing had begun. (An import
        # statement: one guard, rule 3.)
        import torch

        if out.is_nested or out.layout != torch.strided:
            msg = (
                f"out must be a dense (strided) tensor; got a "
                f"{'nested' if out.is_nested else str(out.layout)} tensor"
            )
            raise TypeError(msg)
        if not torch.compiler.is_dynamo_compiling():  # (it cannot ask these)
            self.shape_of(out, "out")  # (an uninitialized parameter has none)
            if out.is_inference() and not torch.is_inference_mode_enabled():
                msg = (
                    "out is an inference tensor (made under torch.inference_mode): "
                    "torch lets it be written only inside inference_mode"
                )
                raise ValueError(msg)
            # A torch.func transform that differentiates refuses any write
            # into an out made outside it (vmap writes an unbatched value).
            functorch = torch._C._functorch  # pyright: ignore[reportAttributeAccessIssue]
            if functorch.maybe_current_level() is not None and any(
                str(interpreter.key()).rsplit(".", 1)[-1] in ("Grad", "Jvp")
                and interpreter.level() > functorch.maybe_get_level(out)
                for interpreter in functorch.get_interpreter_stack()
            ):
                msg = (
                    "out was made outside the torch.func transform (grad, "
                    "jvp...) this call runs in, which cannot write into it; "
                    "make out inside the function, or take the result"
                )
                raise ValueError(msg)
        if out.requires_grad and torch.is_grad_enabled():
            msg = (
                "out requires grad: autograd cannot track an in-place fill of "
                "it (under torch.no_grad() it can be filled, as "
                "torch.nn.init.eye_ fills a weight)"
            )
            raise ValueError(msg)
        # (Contiguous: none to sort, which torch.compile cannot, symbolic.)
        return None if out.is_contiguous() else tuple(out.stride())

    def _check_unnested(self, shape: tuple[int, ...], strides: tuple[int, ...]) -> None:
        # Checked element by element, by NumPy, which Dynamo cannot trace:
        # refused by name, not by a graph break.
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
        if hasattr(x, "full_tensor"):  # a DTensor's values, gathered
            x = x.full_tensor()
        x = x.detach().cpu()
        try:
            return np.asarray(x.numpy())
        except TypeError:  # bfloat16 and float8, which NumPy lacks
            return np.asarray(x.to(self._torch.float32).numpy())

    def short_eye(
        self, shape: Shape, k: Any, dtype: Any, like: Any, device: Any, out: Any
    ) -> Any:
        # The general path's builds, each fact read once: torch.eye(3) costs
        # ~1 us, each check here 0.03-0.1 us. (An import statement: one
        # guard, `self._torch` ten. ``out`` is None: `_short_out`.)
        import torch

        traced = torch.compiler.is_dynamo_compiling()
        one_k = type(k) is int
        if traced and not one_k:
            return None  # (the general path's guards are fewer)
        k = admit_traced(shape, k) if traced else admit(shape, k)
        if k is None:
            return None
        if dtype is not None:
            if not traced and type(dtype) is str:
                try:  # (remembered per spelling: not while tracing, rule 2)
                    dtype = self.dtype(dtype, None)[0]
                except DTypeError:
                    return None
            # (`plain_dtype`'s first case at once: the clients' float.)
            if type(dtype) is not torch.dtype or not (
                dtype.itemsize > 1
                if dtype.is_floating_point
                else plain_dtype(torch, dtype)
            ):
                return None
        if like is not None:
            # A plain tensor (a subclass's rules are the general path's).
            if (
                type(like) is not torch.Tensor and not builds_plain(torch, type(like))
            ) or not (like.is_cpu or like.is_cuda or like.is_meta):
                return None
            device = like.device
        elif device is not None and (
            type(device) is not torch.device
            or (traced and device.type != "cpu" and device.type != "meta")
        ):
            # By the device rule (eagerly, its answer for a name read at
            # once), but an eager torch.device, checked on what is made
            # (``device.type`` costs 0.2 us), and a CPU or meta one traced.
            named = None if traced or type(device) is not str else _NAMED.get(device)
            if named is None:
                try:
                    named = self.device(device)
                except ValueError:
                    return None
            device = named
        if not one_k:
            # A per-matrix k: a plain CPU tensor of a signed integer type,
            # for a CPU result (a result elsewhere is the general path's).
            if (
                (device is not None and device.type != "cpu")
                or type(k) is not torch.Tensor
                or k.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8)
                or not k.is_cpu
                or k.is_nested
                or k.layout != torch.strided
                or not admit_offsets(shape, k.shape)
            ):
                return None
            if dtype is None:
                dtype = torch.get_default_dtype()
        try:
            if traced:
                return mask(torch, shape, k, dtype, device, None, write=False)
            if not one_k:
                made = per_matrix(torch, shape, k, dtype, device, None)
                return made if made.is_cpu else None
            made = scalar_k(torch, shape, k, dtype, device, None)  # pyright: ignore[reportArgumentType]
        except _REFUSALS:
            return None  # the general path says why, in this package's words
        if like is not None or device is None or made.is_cpu or made.is_meta:
            return made
        # A plain tensor made on CUDA proves CUDA works (asking costs 1-4 us).
        if made.is_cuda and (type(made) is torch.Tensor or torch.cuda.is_available()):
            return made
        return None

    def eye(self, build: Build) -> Any:
        torch = self._torch
        of = build.like if build.out is None else build.out
        if of is not None and not builds_plain(torch, type(of)):
            return _subclass_build(torch, build)
        shape, k, dtype, device = build.shape, build.k, build.dtype, build.device
        return general(torch, shape, k, dtype, device, build.out)


TORCH = TorchBackend()
_NAMED: dict[str, Any] = {}  # a device name's answer (`TorchBackend.device`)
