"""PyTorch's eye, built by torch's own idioms (`general`)."""

from __future__ import annotations

import math
from typing import Any

from ..._validate.offsets import clamp_array

__all__ = ["clamp", "general", "mask", "per_matrix", "scalar_k"]

# Matrices up to this many elements are made once and copied over a batch;
# the template is then at most 4 MiB beside the output (complex128).
_SMALL_MATRIX = 1 << 18
# Batches on CUDA past this many elements (in the first batch dimension's
# matrices) are written in place (``device.type``, 0.2 us, asked only then).
_CUDA_IN_PLACE = 1 << 16
# Per-matrix offsets (`per_matrix`): outputs up to this many elements, and
# matrices narrower than this many columns, are the mask; others are written
# by index, at most this many rows at a time. Measured on 2 cores, float32,
# against the mask: 64x32x32 0.95x, 4096x16x16 0.49x, 4096x8x8 1.43x.
_MASK_ELEMENTS = 1 << 15
_PUT_COLUMNS = 16
_PUT_ROWS = 1 << 20


def general(
    torch: Any, shape: tuple[Any, ...], k: Any, dtype: Any, device: Any, out: Any
) -> Any:
    """The general path's build of a plain tensor. The mask where the sizes
    are known only when the program runs (it compares none of them), under
    torch.compile (guard rule 4; inductor fuses it into one kernel), and for
    a per-matrix ``k`` whose values cannot be read (a meta tensor, a
    FakeTensorMode's fakes, ``torch.func``'s wrappers)."""
    if type(k) is not int:  # (not isinstance: one builtin fewer to guard)
        k = torch.as_tensor(k, dtype=torch.int64, device=device)
    elements = math.prod(shape)
    if type(elements) is not int:
        return mask(torch, shape, k, dtype, device, out, write=False)
    if not elements:  # no eye, diagonal nor arange: they overflow near 2**63
        return torch.zeros(shape, dtype=dtype, device=device) if out is None else out
    if type(k) is int:
        if not torch.compiler.is_dynamo_compiling():
            return scalar_k(torch, shape, k, dtype, device, out)
    elif not (
        torch.compiler.is_compiling()
        or type(k) is not torch.Tensor
        or k.is_meta  # pyright: ignore[reportAttributeAccessIssue]
        or torch._C._functorch.is_functorch_wrapped_tensor(k)
        # (A vmapped out: put_ has no batching rule, and warns so.)
        or (out is not None and torch._C._functorch.is_functorch_wrapped_tensor(out))
    ):
        return per_matrix(torch, shape, k, dtype, device, out)
    return mask(torch, shape, k, dtype, device, out, write=False)


def clamp(torch: Any, k: Any, n_rows: Any, n_cols: Any) -> Any:
    """An integer tensor ``k`` clamped into ``[-n_rows, n_cols]`` as int64
    (`clamp_array`), into int64 first: torch's CPU kernels compute nothing
    on uint16-64, not even a comparison, and a uint64 past 2**63 wraps
    negative there, past every size. So no bound of k's type meets a size
    (a symbolic one, while Dynamo traces, reads as an int)."""
    wide = k.to(torch.int64)
    if k.dtype == torch.uint64:
        wide = torch.where(wide < 0, n_cols, wide)
    return clamp_array(torch, wide, n_rows, n_cols, torch.int64, _clip)


def _clip(k: Any, lo: Any, hi: Any, index: Any) -> Any:
    """`clamp_array`'s ``clip`` for torch, of an int64 ``k`` (`clamp`)."""
    return k.clamp(lo, hi)


def scalar_k(
    torch: Any, shape: tuple[int, ...], k: int, dtype: Any, device: Any, out: Any
) -> Any:
    """One offset for every matrix (``dtype``, ``device`` None: torch's
    defaults)."""
    # Not sliced: slicing a torch.Size costs ~0.2 us, indexing a third.
    batch = len(shape) > 2
    n_rows, n_cols = (shape[-2], shape[-1]) if batch else shape  # pyright: ignore[reportAssignmentType]
    if batch and (
        n_rows * n_cols > _SMALL_MATRIX
        or (
            shape[0] * n_rows * n_cols > _CUDA_IN_PLACE and _on_cuda(torch, device, out)
        )
    ):
        # In place: a large matrix is not worth a template, nor a large
        # batch on CUDA (on an H200, 256 MiB of 64x64 float32, zeros and a
        # diagonal fill took 0.76 of eye + expand + clone's time).
        out = _zeroed(torch, shape, dtype, device, out)
        if -n_rows < k < n_cols:
            out.diagonal(k, -2, -1).fill_(1)
        return out
    # One matrix, by torch's eye where it can (one kernel), copied over the
    # batch: faster than a strided diagonal fill. (Each keyword torch parses
    # costs ~0.25 us: none where it can.)
    matrix = None
    if k == 0:
        try:
            if dtype is None and device is None:
                matrix = torch.eye(n_rows, n_cols)
            elif n_rows == n_cols:
                matrix = torch.eye(n_rows, dtype=dtype, device=device)
            else:
                matrix = torch.eye(n_rows, n_cols, dtype=dtype, device=device)
        except NotImplementedError:  # (uint16-64 on the CPU: asked after)
            pass
    if matrix is None:  # torch.eye has no offset
        matrix = torch.zeros((n_rows, n_cols), dtype=dtype, device=device)
        if -n_rows < k < n_cols:
            matrix.diagonal(k).fill_(1)
    if out is not None:
        return out.copy_(matrix)  # broadcast over the batch: one pass
    # (The sizes one by one: a torch.Size or tuple costs torch ~2 us more.)
    return matrix.expand(*shape).clone() if batch else matrix


def _zeroed(torch: Any, shape: Any, dtype: Any, device: Any, out: Any) -> Any:
    """``out`` zeroed in place, or a fresh tensor of zeros."""
    return (
        torch.zeros(shape, dtype=dtype, device=device) if out is None else out.zero_()
    )


def _on_cuda(torch: Any, device: Any, out: Any) -> bool:
    """Whether the output is on a CUDA device (None: torch's default)."""
    if out is not None:
        return bool(out.is_cuda)
    if device is None:
        device = torch.get_default_device()
    return bool(device.type == "cuda")


def per_matrix(
    torch: Any, shape: tuple[int, ...], k: Any, dtype: Any, device: Any, out: Any
) -> Any:
    """One offset per matrix, eagerly, for a ``k`` of a signed integer type
    that holds values, on the result's device (clamped by the general path;
    from the short path, as the caller gave it). Matrices at least
    `_PUT_COLUMNS` wide in an output of more than `_MASK_ELEMENTS`: zeros,
    then one write a row at computed indices (a row without a one writes a
    zero within itself). Else the mask (a small fresh output: written by
    its comparison)."""
    n_rows, n_cols = shape[-2], shape[-1]
    if takes_mask(torch, shape, dtype, out):
        small = math.prod(shape) <= _MASK_ELEMENTS
        return mask(torch, shape, k, dtype, device, out, write=small and out is None)
    out = _zeroed(torch, shape, dtype, device, out)
    # Clamped in int64: a column r + k within int64, and a row's one in it.
    k = clamp(torch, k, n_rows, n_cols).expand(shape[:-2]).reshape(-1, 1)
    flat, rows = out.view(-1), torch.arange(n_rows, device=device)
    # By blocks: the index scratch (~40 bytes a row) stays within ~40 MiB.
    per_block = max(1, _PUT_ROWS // n_rows)
    for first in range(0, k.shape[0], per_block):
        cols = k[first : first + per_block] + rows  # (block, rows)
        inside = cols.clamp(0, n_cols - 1)
        where = torch.arange(
            first * n_rows, first * n_rows + cols.numel(), device=device
        ).view(cols.shape)
        flat.put_(where.mul_(n_cols).add_(inside), (inside == cols).to(dtype))
    return out


def takes_mask(torch: Any, shape: tuple[int, ...], dtype: Any, out: Any) -> bool:
    """Whether `per_matrix` builds the mask, which holds a bool an element
    beside the output, rather than writing the ones by index."""
    return (
        math.prod(shape) <= _MASK_ELEMENTS
        or shape[-1] < _PUT_COLUMNS
        # (put_ lacks uint16-64 and float8 on torch's CPU, and has no
        # deterministic kernel: it would fail once out is zeroed.)
        or not _puts(torch, dtype)
        or torch.are_deterministic_algorithms_enabled()
        or (out is not None and not out.is_contiguous())
    )


def _puts(torch: Any, dtype: Any) -> bool:
    """Whether torch's ``put_`` writes ``dtype``."""
    if dtype.is_floating_point:
        return bool(dtype.itemsize > 1)  # (not the float8 types)
    return dtype not in (torch.uint16, torch.uint32, torch.uint64)


def mask(
    torch: Any,
    shape: tuple[Any, ...],
    k: Any,
    dtype: Any,
    device: Any,
    out: Any,
    *,
    write: bool,
) -> Any:
    """The mask ``col - row == k`` over the batch (``k``: an int, or an
    integer tensor broadcastable to the batch). Made out of place, it
    compares no size (guard rule 4) and writes nothing into a fresh tensor
    (``torch.func.vmap`` cannot write a batched ``k``'s mask into one);
    with ``write`` (eagerly, a tensor ``k``, no ``out``), the comparison
    writes a fresh output itself: one kernel, 0.47x the mask and its cast
    at 32x32x32."""
    n_rows, n_cols = shape[-2], shape[-1]
    rows = torch.arange(n_rows, device=device)
    cols = rows if write and n_rows == n_cols else torch.arange(n_cols, device=device)
    if type(k) is not int:
        k = k.view(*k.shape, 1, 1)
    if write:  # (a tensor k: `type(k) is int`, which type checkers narrow by, is not)
        if k.shape[:-2] != shape[:-2]:  # pyright: ignore[reportAttributeAccessIssue]
            k = k.expand(*shape[:-2], 1, 1)  # pyright: ignore[reportAttributeAccessIssue]
        made = torch.empty(shape, dtype=dtype, device=device)
        # (unsqueeze: indexing cost ~0.5 us more, 4% of a small per-matrix call)
        return torch.eq(cols - rows.unsqueeze(1), k, out=made)
    hit = (cols - rows[:, None]) == k
    if out is not None:
        return out.copy_(hit)  # broadcast over the batch: one pass
    if dtype is None:
        dtype = torch.get_default_dtype()
    # (The copy of an expanded view: dense, in one pass.)
    return hit.expand(*shape).to(dtype, copy=True)
