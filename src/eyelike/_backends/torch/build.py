"""PyTorch's eye, built by torch's own idioms: for one offset, ``torch.eye``
(or ``zeros`` and a diagonal fill) for one matrix, copied over a batch; for
one offset per matrix, torch's own mask ``col - row == k``, or, for a
larger output of wider matrices, one write a row at computed indices. And
the dtype facts the backend reads without a table (its guard rule 2)."""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "general",
    "mask",
    "plain_dtype",
    "scalar_k",
    "values_per_matrix",
    "wide_unsigned",
]

# Matrices up to this many elements are made once and copied over a batch;
# the template is then at most 4 MiB beside the output (complex128).
_SMALL_MATRIX = 1 << 18
# Batches on CUDA past this many elements (in the first batch dimension's
# matrices) are written in place; smaller ones are two launches either way,
# and ``device.type`` costs 0.2 us, a few percent of a small call.
_CUDA_IN_PLACE = 1 << 16
# Per-matrix offsets (`values_per_matrix`): outputs up to this many
# elements, and matrices narrower than this many columns, are the mask;
# others are written by index, at most this many rows at a time. Measured on
# 2 cores, float32, against the mask, side by side: 64x32x32 0.95x,
# 4096x16x16 0.49x, 4096x64x64 0.70x; 32x32x32 0.94x (the mask 0.96x);
# 4096x8x8 1.43x (the mask 0.97x).
_MASK_ELEMENTS = 1 << 15
_PUT_COLUMNS = 16
_PUT_ROWS = 1 << 20


def general(
    torch: Any, shape: tuple[Any, ...], k: Any, dtype: Any, device: Any, out: Any
) -> Any:
    """The general path's build, for whatever the checks let through."""
    elements = math.prod(shape)
    if type(elements) is not int:
        # Sizes known only when the program runs (torch.export, dynamic
        # compile): the one build that compares none of them.
        return mask(torch, shape, k, dtype, device, out)
    if not elements:  # (every empty output: the gate sends them all here)
        # No torch.eye, diagonal nor arange: torch overflows near 2**63.
        return torch.zeros(shape, dtype=dtype, device=device) if out is None else out
    if not isinstance(k, int):
        return per_matrix(torch, shape, k, dtype, device, out)
    if torch.compiler.is_dynamo_compiling():
        # A size or k may be known only when the program runs (guard rule 4):
        # the mask compares neither (and inductor fuses it into one kernel).
        return mask(torch, shape, k, dtype, device, out)
    return scalar_k(torch, shape, k, dtype, device, out)


def scalar_k(
    torch: Any, shape: tuple[int, ...], k: int, dtype: Any, device: Any, out: Any
) -> Any:
    """One offset for every matrix (``dtype``, ``device`` None: torch's
    defaults)."""
    # Indexed, not sliced: slicing a torch.Size costs ~0.2 us each time
    # (and unpacking, the one matrix's case, a third of indexing).
    batch = len(shape) > 2
    n_rows, n_cols = (shape[-2], shape[-1]) if batch else shape
    if batch and (
        n_rows * n_cols > _SMALL_MATRIX
        or (
            shape[0] * n_rows * n_cols > _CUDA_IN_PLACE and _on_cuda(torch, device, out)
        )
    ):
        # A large matrix is not worth a template: write in place. A large
        # batch on CUDA neither: the memset is the GPU's fastest write, and
        # on an H200 (256 MiB of 64x64 float32) zeros + diagonal fill took
        # 0.76 of the time of eye + expand + clone (docs/bench-gpu.json).
        if out is None:
            out = torch.zeros(shape, dtype=dtype, device=device)
        else:
            out.zero_()
        if out.numel() and -n_rows < k < n_cols:
            out.diagonal(k, -2, -1).fill_(1)
        return out
    # One matrix, made by torch's own eye where it can (one kernel: the
    # cheapest call torch has), then copied over the batch: torch's own
    # idiom, faster than zeros plus a strided diagonal fill. Each keyword
    # torch parses costs ~0.25 us, as much as the rest: none where it can.
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
    # ``clone`` of an expanded view: a fresh, contiguous, writeable batch.
    # (The sizes one by one: a torch.Size or tuple costs torch ~2 us more.)
    return matrix.expand(*shape).clone() if batch else matrix


def _on_cuda(torch: Any, device: Any, out: Any) -> bool:
    """Whether the output is on a CUDA device (None: torch's default one,
    which ``torch.set_default_device`` may have made a GPU)."""
    if out is not None:
        return bool(out.is_cuda)
    if device is None:
        device = torch.get_default_device()
    return bool(device.type == "cuda")


def per_matrix(
    torch: Any, shape: tuple[int, ...], k: Any, dtype: Any, device: Any, out: Any
) -> Any:
    """One offset per matrix (``k``: an integer tensor broadcastable to the
    batch, clamped into ``[-R, C]``): `values_per_matrix`, or the mask under
    torch.compile (inductor fuses it into one kernel) and for a ``k`` whose
    values cannot be read (a meta tensor, a FakeTensorMode's fakes,
    ``torch.func`` transforms' wrappers)."""
    k = torch.as_tensor(k, dtype=torch.int64, device=device)
    if (
        torch.compiler.is_compiling()
        or type(k) is not torch.Tensor
        or k.is_meta
        or torch._C._functorch.is_functorch_wrapped_tensor(k)
    ):
        return mask(torch, shape, k, dtype, device, out)
    return values_per_matrix(torch, shape, k, dtype, device, out)


def values_per_matrix(
    torch: Any, shape: tuple[int, ...], k: Any, dtype: Any, device: Any, out: Any
) -> Any:
    """`per_matrix` eagerly, for a ``k`` of a signed integer type that holds
    values, on the result's device (the short path's, not yet clamped).

    Matrices at least `_PUT_COLUMNS` wide in an output of more than
    `_MASK_ELEMENTS`: zeros, then one write a row, at a flat index computed
    for every row at once (``put_``; a row without a one writes a zero
    within itself), no data-dependent size. Else the mask (less scratch per
    element for narrow matrices, fewer calls for a small output): a fresh
    one in the fewest calls (on a small output each costs about as much as
    its work, ~2.5 us on 2 cores), up to `_MASK_ELEMENTS` the comparison
    written straight into the result (``torch.eq(..., out=)``: 0.47x the
    mask and its cast at 32x32x32 float32, side by side on 2 cores), larger
    cast in a pass of its own (4096x64x64: 2.2x the other way).
    """
    n_rows, n_cols = shape[-2], shape[-1]
    small = math.prod(shape) <= _MASK_ELEMENTS
    if out is None and (small or n_cols < _PUT_COLUMNS):
        rows = torch.arange(n_rows, device=device)
        cols = rows if n_rows == n_cols else torch.arange(n_cols, device=device)
        offsets = k.view(*k.shape, 1, 1)
        if small:
            if offsets.shape[:-2] != shape[:-2]:  # k broadcasts over the batch
                offsets = offsets.expand(*shape[:-2], 1, 1)
            made = torch.empty(shape, dtype=dtype, device=device)
            return torch.eq(cols - rows.unsqueeze(1), offsets, out=made)
        hit = (cols - rows.unsqueeze(1)) == offsets
        if hit.shape != shape:  # k broadcasts over the batch
            hit = hit.expand(*shape)
        return hit.to(dtype, copy=True)
    if (
        small
        or n_cols < _PUT_COLUMNS
        or wide_unsigned(dtype)  # (torch's CPU kernels have no put_ for them)
        or (out is not None and not out.is_contiguous())
    ):
        return mask(torch, shape, k, dtype, device, out)
    result = torch.zeros(shape, dtype=dtype, device=device) if out is None else out
    if out is not None:
        result.zero_()
    # Clamped in int64: a column r + k within int64, and a row's one lands
    # in it.
    k = k.to(torch.int64).clamp(-n_rows, n_cols).expand(shape[:-2]).reshape(-1, 1)
    flat, rows = result.view(-1), torch.arange(n_rows, device=device)
    # By blocks of matrices: the index scratch (about 40 bytes a row) stays
    # within about 40 MiB.
    per_block = max(1, _PUT_ROWS // n_rows)
    for first in range(0, k.shape[0], per_block):
        cols = k[first : first + per_block] + rows  # (block, rows)
        inside = cols.clamp(0, n_cols - 1)
        where = torch.arange(
            first * n_rows, first * n_rows + cols.numel(), device=device
        ).view(cols.shape)
        flat.put_(where.mul_(n_cols).add_(inside), (inside == cols).to(dtype))
    return result


def mask(
    torch: Any, shape: tuple[Any, ...], k: Any, dtype: Any, device: Any, out: Any
) -> Any:
    """The mask ``col - row == k`` over the batch, made out of place: no
    size is compared (each comparison of a symbolic size would be a guard of
    an exported or compiled program) and nothing is written into a fresh
    tensor (``torch.func.vmap`` cannot write a batched ``k``'s mask into
    one). ``k``: an int, or an integer tensor broadcastable to the batch.
    """
    rows = torch.arange(shape[-2], device=device)
    cols = torch.arange(shape[-1], device=device)
    if type(k) is not int:  # (not isinstance: one builtin fewer to guard)
        k = torch.as_tensor(k, dtype=torch.int64, device=device)[..., None, None]
    hit = (cols - rows[:, None]) == k
    if out is not None:
        return out.copy_(hit)  # broadcast over the batch: one pass
    if dtype is None:
        dtype = torch.get_default_dtype()
    # A fresh, contiguous tensor even where ``k`` broadcasts over the batch:
    # the copy of an expanded view is laid out densely, in one pass.
    return hit.expand(*shape).to(dtype, copy=True)


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


def wide_unsigned(dtype: Any) -> bool:
    """uint16, uint32 or uint64, which many of torch's CPU kernels lack."""
    return bool(
        not dtype.is_floating_point  # the common case decides at once
        and not dtype.is_signed
        and not dtype.is_complex
        and dtype.itemsize > 1
    )
