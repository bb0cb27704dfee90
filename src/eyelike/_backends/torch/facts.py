"""What eager torch is asked that a compiled program never asks: which
tensor types are torch's, its dtypes by name, which device types this build
has and how many CUDA devices, how torch refuses a device or a dtype on it,
how far an empty shape's strides reach, the two refusals of an ``out`` that
only an eager call can see (an inference tensor, a torch.func transform's
capture), and a tensor's values on the host.

Kept apart from the backend's rules (this package's ``__init__``) and its
builds (``build``), which torch.compile traces: nothing here is read on a
compiled call's common path, so it adds no guard (the ``__init__``'s guard
rules).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._validate import dtypes as _dtypes
from ..._validate.text import no_usable_device, show

__all__ = [
    "TORCH_REFUSALS",
    "captured_by_a_transform",
    "check_device",
    "contiguous_strides",
    "dtype_table",
    "has_device_type",
    "is_tensor_type",
    "refuse_eager_out",
    "storage_span",
    "to_host",
]

# How torch refuses a device, or a dtype on it, when making a tensor: its
# C++ errors (NotImplementedError among them: no kernel for that device),
# a build without that device type (AssertionError: "Torch not compiled
# with CUDA enabled"), a dtype the device lacks (TypeError: MPS's float64),
# a device type whose module this build lacks (ImportError: "hpu").
# The short paths build first and ask after: the general path says why.
TORCH_REFUSALS = (RuntimeError, AssertionError, TypeError, ImportError)


def is_tensor_type(array_type: type) -> bool:
    """Whether ``array_type`` is ``torch.Tensor`` or a subclass (nn.Parameter
    ...), by name (guard rule 2): torch need not be imported to ask."""
    if array_type.__name__ == "Tensor" and array_type.__module__ == "torch":
        return True  # torch.Tensor itself: no loop to trace
    for c in array_type.__mro__[1:]:
        if c.__name__ == "Tensor" and c.__module__ == "torch":
            return True
    return False


def check_device(torch: Any, dev: Any, device: Any) -> None:
    """Refuse a device ``dev`` (the caller's ``device``, read by torch) of a
    type other than CPU or meta that this build lacks, or that has no device
    or driver here, or a CUDA index past the devices this machine has."""
    if not has_device_type(torch, dev.type):
        msg = no_usable_device("torch", dev.type.upper(), device)
        raise ValueError(msg)
    if dev.type == "cuda" and dev.index is not None:
        # (torch says "invalid device ordinal" only once allocating.)
        count = torch.cuda.device_count()
        if dev.index >= count:
            msg = (
                f"device {show(device)}: this machine has {count} CUDA "
                f"device{'s' if count > 1 else ''} (cuda:0 to cuda:{count - 1})"
            )
            raise ValueError(msg)


def refuse_eager_out(torch: Any, out: Any) -> None:
    """Refuse an ``out`` that torch would refuse only once writing had
    begun, as only an eager call can ask (torch.compile cannot): an
    inference tensor outside ``torch.inference_mode``, or one made outside a
    torch.func transform that differentiates."""
    if out.is_inference() and not torch.is_inference_mode_enabled():
        msg = (
            "out is an inference tensor (made under torch.inference_mode): "
            "torch lets it be written only inside inference_mode"
        )
        raise ValueError(msg)
    if captured_by_a_transform(torch, out):
        msg = (
            "out was made outside the torch.func transform (grad, jvp...) "
            "this call runs in, which cannot write into it; make out inside "
            "the function, or take the result"
        )
        raise ValueError(msg)


def has_device_type(torch: Any, kind: str) -> bool:
    backend = getattr(torch.backends, kind, None) if kind == "mps" else None
    module = backend or getattr(torch, kind, None)
    check = getattr(module, "is_available", None)
    return bool(check()) if callable(check) else False


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides of a C-contiguous tensor of ``shape`` (as torch's, with
    an empty dimension counted as 1)."""
    # (Loops, not generators: torch.compile traces this with a DTensor.)
    strides, stride = [], 1
    for d in reversed(shape):
        strides.append(stride)
        stride *= max(d, 1)
    return tuple(reversed(strides))


def storage_span(shape: tuple[int, ...]) -> int:
    """The largest number torch computes making ``shape``: its element count
    multiplied left to right (up to the first zero) and its strides."""
    strides = contiguous_strides(shape)
    # torch multiplies the count in unsigned 64 bits: past 2**64 - 1 it fails.
    # (A loop, not takewhile: torch.compile cannot trace an iterator into
    # math.prod, and reaches this with every empty output.)
    lead = 1
    for d in shape:
        if not d:
            break
        lead *= d
    return max(lead if lead >= 2**64 else 0, *strides)


def captured_by_a_transform(torch: Any, out: Any) -> bool:
    """Whether a torch.func transform that differentiates (grad, jvp, vjp)
    runs around this call, and ``out`` was made outside it: such a
    transform refuses any write into it (vmap writes an unbatched value
    there)."""
    functorch = torch._C._functorch
    if functorch.maybe_current_level() is None:
        return False  # no transform: the common case
    made_at = functorch.maybe_get_level(out)  # -1: made outside them all
    return any(
        str(interpreter.key()).rsplit(".", 1)[-1] in ("Grad", "Jvp")
        and interpreter.level() > made_at
        for interpreter in functorch.get_interpreter_stack()
    )


def dtype_table(torch: Any) -> dict[str, Any]:
    """torch's dtypes by their names (array-api-compat's: too few, and
    cached up to its 1.11)."""
    table = {}
    for name in _dtypes.STANDARD_NAMES + _dtypes.EXTRA_NAMES:
        dt = getattr(torch, name, None)
        if isinstance(dt, torch.dtype):
            table[name] = dt
    return table


def to_host(torch: Any, x: Any) -> np.ndarray[Any, Any]:
    """A NumPy array of ``x``'s values (a DTensor's gathered; bfloat16 and
    float8, which NumPy lacks, as float32)."""
    if hasattr(x, "full_tensor"):
        x = x.full_tensor()
    x = x.detach().cpu()
    try:
        return np.asarray(x.numpy())
    except TypeError:
        return np.asarray(x.to(torch.float32).numpy())
