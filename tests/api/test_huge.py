"""Huge sizes: refused before allocating when they cannot work, right when
they can (outputs of more than 2**31 elements).

"Before allocating" is measured with ``tracemalloc`` (NumPy and
array-api-strict report their buffers to it) and, for every namespace, by the
message: it must come from eyelike's own size check ("elements", "bytes"),
not from a failed allocation.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from helpers import raises_before_allocating, to_numpy

import eyelike
from eyelike import eye, eye_like
from eyelike._validate import size as _size

GiB = 1 << 30
INT64_MAX = 2**63 - 1


def _phys() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _available() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError):  # pragma: no cover - not Linux
        return 0


def _host_namespaces() -> list[Any]:
    """Namespaces whose arrays live in this machine's memory (JAX on CPU)."""
    mods: list[Any] = [pytest.param(np, id="numpy")]
    mods += [
        pytest.param(importlib.import_module(module), id=name)
        for name, module in (
            ("torch", "torch"),
            ("array_api_strict", "array_api_strict"),
            ("jax", "jax.numpy"),
        )
        if importlib.util.find_spec(name) is not None
    ]
    return mods


def _all_namespaces() -> list[Any]:
    mods = _host_namespaces()
    try:
        import dask.array as da

        mods.append(pytest.param(da, id="dask"))
    except ImportError:  # pragma: no cover
        pass
    return mods


# ------------------------------------------------ counts that overflow int64

OVERFLOWING: list[tuple[str, Callable[[Any], Any]]] = [
    ("2**32 x 2**32", lambda xp: eye(2**32, 2**32, xp=xp, dtype="int8")),
    ("2**63 exactly", lambda xp: eye(2**31, 2**31, batch_shape=2, xp=xp)),
    (
        "batch 2**62 x 4",
        lambda xp: eye(4, batch_shape=(2**62, 4), xp=xp, dtype="uint8"),
    ),
    (
        "max rows x 2 cols",
        lambda xp: eye(INT64_MAX, 2, xp=xp, dtype="bool"),
    ),
    (
        "per-matrix k",
        lambda xp: eye(2**40, 2**40, batch_shape=2, k=[0, 1], xp=xp, dtype="int8"),
    ),
]


@pytest.mark.parametrize("xp", _all_namespaces())
@pytest.mark.parametrize("call", [pytest.param(c, id=i) for i, c in OVERFLOWING])
def test_element_count_overflow_refused(xp: Any, call: Callable[[Any], Any]) -> None:
    raises_before_allocating(lambda: call(xp), ValueError, "elements", "2**63")


@pytest.mark.parametrize("xp", _all_namespaces())
def test_byte_count_overflow_refused(xp: Any) -> None:
    # 2**62 elements fit in int64; 8 or 16 bytes each do not.
    dtype = "complex64" if xp.__name__.startswith("jax") else "complex128"
    raises_before_allocating(
        lambda: eye(2**31, 2**31, xp=xp, dtype=dtype), ValueError, "bytes", "2**63"
    )
    raises_before_allocating(
        lambda: eye(2**31, 2**30, batch_shape=(2,), xp=xp, dtype="float32"),
        ValueError,
        "bytes",
    )


# ------------------------------------------- sizes beyond this machine's RAM


@pytest.mark.parametrize("xp", _host_namespaces())
def test_beyond_memory_refused(xp: Any) -> None:
    raises_before_allocating(
        lambda: eye(2**20, 2**20, xp=xp, dtype="float32"), MemoryError, "memory"
    )
    phys = _phys()
    # One byte more than the machine has: refused, nothing attempted.
    raises_before_allocating(
        lambda: eye(1, phys + 1, xp=xp, dtype="uint8"),
        MemoryError,
        str(phys + 1),
    )
    raises_before_allocating(
        lambda: eye(2, phys // 4 + 1, batch_shape=(2,), xp=xp, dtype="int8"),
        MemoryError,
        "bytes",
    )


def test_torch_cpu_device_beyond_memory_refused() -> None:
    torch = pytest.importorskip("torch")
    for device in ("cpu", torch.device("cpu"), "cpu:0"):
        raises_before_allocating(
            lambda d=device: eye(2**20, 2**20, xp=torch, device=d),
            MemoryError,
            "memory",
        )


@pytest.mark.parametrize("xp", _host_namespaces()[:2])
def test_memory_limit_is_exact(xp: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # With the machine pretended to have 1 MiB, an output of exactly 1 MiB is
    # made and one byte more is refused: the check is the byte count itself.
    monkeypatch.setattr(_size, "physical_memory", lambda: 1 << 20)
    ok = eye(1024, 1024, xp=xp, dtype="uint8", k=5)
    assert tuple(ok.shape) == (1024, 1024)
    assert int(np.count_nonzero(to_numpy(ok))) == 1019
    raises_before_allocating(
        lambda: eye(1024, 1025, xp=xp, dtype="uint8"), MemoryError, "1049600"
    )
    raises_before_allocating(
        lambda: eye(512, 513, batch_shape=(2, 2), xp=xp, dtype="bool"),
        MemoryError,
        "bytes",
    )


@pytest.mark.parametrize("xp", _host_namespaces()[2:])
def test_memory_limit_generic(xp: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The generic backend also needs (R, C) scratch: an output over the
    # memory is refused, one well under it (scratch included) is made.
    monkeypatch.setattr(_size, "physical_memory", lambda: 1 << 20)
    raises_before_allocating(
        lambda: eye(1024, 1025, xp=xp, dtype="uint8"), MemoryError, "memory"
    )
    monkeypatch.setattr(_size, "physical_memory", lambda: 64 << 20)
    ok = eye(1024, 1024, xp=xp, dtype="uint8", k=-5)
    assert int(np.count_nonzero(to_numpy(ok))) == 1019


@pytest.mark.parametrize("shape", [(64, 32, 32), (1024, 8, 8)])
@pytest.mark.parametrize("xp", _host_namespaces())
def test_a_per_matrix_mask_is_counted_beside_the_output(
    xp: Any, shape: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug (a newcomer's read): the memory a per-matrix build holds beside
    the output was counted for one matrix, where the mask of the reference
    build and of torch's holds a bool for every element of the batch. An
    output that fits a machine with what its build holds beside it is made
    on every host namespace; one byte less, it is refused where the build
    holds a mask (torch's for matrices under 16 wide, not its indexed write
    for wider ones: a review found those refused at 0.8 of the memory)."""
    from eyelike._backends import backend_of_namespace

    backend = backend_of_namespace(xp)
    dtype = backend.dtype("uint8", None)[0]
    batch, n = shape[0], shape[-1]
    k = np.arange(batch) % 5 - 2
    masks = backend._masks(shape, dtype, None)
    scratch = (batch * n * n + 8 * n * n) * masks
    if xp.__name__ == "torch":  # the mask for narrow matrices only
        assert masks == (n < 16)
    monkeypatch.setattr(_size, "physical_memory", lambda: batch * n * n + scratch)
    made = eye(n, batch_shape=batch, k=k, xp=xp, dtype="uint8")
    assert tuple(made.shape) == shape
    assert int(np.count_nonzero(to_numpy(made))) == sum(n - abs(v) for v in k)
    if scratch:
        monkeypatch.setattr(
            _size, "physical_memory", lambda: batch * n * n + scratch - 1
        )
        raises_before_allocating(
            lambda: eye(n, batch_shape=batch, k=k, xp=xp, dtype="uint8"),
            MemoryError,
            "memory",
        )


def test_jax_cpu_beyond_memory_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # Regression: JAX on the CPU was not treated as host memory, so an
    # output larger than the machine came back as an array whose computation
    # failed later. (Pretend 1 MiB: a regression only makes 1.2 MB.)
    jnp = pytest.importorskip("jax.numpy")
    monkeypatch.setattr(_size, "physical_memory", lambda: 1 << 20)
    with pytest.raises(MemoryError, match="memory"):
        eye(1100, 1100, xp=jnp, dtype="uint8")


# ------------------------------------------------------------- the adapters


def test_adapters_refuse_huge_sizes() -> None:
    phys = _phys()
    side = 2**20  # 2**40 elements: more than any machine here has bytes
    huge_x = np.broadcast_to(np.float32(0), (side, side))  # holds 4 bytes
    raises_before_allocating(lambda: eye_like(huge_x), MemoryError, "bytes")
    raises_before_allocating(
        lambda: eyelike.onnx.eye_like(huge_x, dtype=2), MemoryError, "bytes"
    )
    raises_before_allocating(
        lambda: eyelike.onnx.eye_like(huge_x, k=-(2**63)), MemoryError, "bytes"
    )
    batch_x = np.broadcast_to(np.uint8(0), (2**30, 2**30, 4))  # 2**62 elements
    raises_before_allocating(
        lambda: eye_like(batch_x, dtype="float64"), ValueError, "bytes", "2**63"
    )
    raises_before_allocating(lambda: eye_like(batch_x), MemoryError, "bytes")
    ov = eyelike.openvino.eye
    raises_before_allocating(
        lambda: ov(side, side, 0, output_type="f64"), MemoryError, "memory"
    )
    raises_before_allocating(
        lambda: ov(1, phys + 1, 0, output_type="u8"), MemoryError, "memory"
    )
    raises_before_allocating(
        lambda: ov(2**32, 2**32, 0, output_type="u8"), ValueError, "elements"
    )
    raises_before_allocating(
        lambda: ov(2**31, 2**31, 0, [2], output_type="boolean"), ValueError, "2**63"
    )
    raises_before_allocating(
        lambda: ov(
            np.array([side], np.int64),
            np.int32(side),
            np.int64(0),
            np.array([2], np.int32),
            output_type="f16",
        ),
        MemoryError,
        "memory",
    )
    raises_before_allocating(
        lambda: ov(2**31, 2**30, INT64_MAX, output_type="bf16"),
        MemoryError,
        "memory",
    )


def test_adapters_refuse_huge_sizes_torch_and_strict() -> None:
    torch = pytest.importorskip("torch")
    xs = pytest.importorskip("array_api_strict")
    huge_t = torch.zeros(()).expand(2**20, 2**20)
    raises_before_allocating(lambda: eye_like(huge_t), MemoryError, "memory")
    raises_before_allocating(
        lambda: eyelike.onnx.eye_like(huge_t, dtype=11), MemoryError, "memory"
    )
    raises_before_allocating(
        lambda: eyelike.openvino.eye(
            torch.tensor([2**20]), 2**20, 0, output_type="f32"
        ),
        MemoryError,
        "memory",
    )
    raises_before_allocating(
        lambda: eyelike.openvino.eye(
            xs.asarray(2**20), xs.asarray([2**20]), 0, output_type="u16"
        ),
        MemoryError,
        "memory",
    )
    raises_before_allocating(
        lambda: eyelike.openvino.eye(torch.tensor(2**32), 2**32, 0, output_type="i8"),
        ValueError,
        "elements",
    )


# ----------------------------------- zero elements, however large the others


def test_zero_elements_with_huge_dims_numpy_and_torch() -> None:
    tracemalloc.start()
    try:
        a = eye(0, 2**62, dtype="uint8")
        b = eye(2**40, 0, batch_shape=(2**20,), dtype="int8")
        c = eye(2**31, 2**31, batch_shape=(0,), dtype="uint8")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (a.shape, b.shape, c.shape) == (
        (0, 2**62),
        (2**20, 2**40, 0),
        (0, 2**31, 2**31),
    )
    assert peak < 1 << 20
    torch = pytest.importorskip("torch")
    t = eye(0, 2**62, xp=torch)
    assert tuple(t.shape) == (0, 2**62)


def test_unrepresentable_zero_element_shape_named() -> None:
    with pytest.raises(ValueError) as info:
        eye(0, 2**62)
    assert "shape" in str(info.value) or "n_cols" in str(info.value)


def test_generic_zero_elements_allocate_nothing_strict() -> None:
    # Regression: the generic backend built arange(R), arange(C) and their
    # (R, C) difference even for an empty output (MemoryError, or 8 bytes
    # per row and column for nothing).
    xs = pytest.importorskip("array_api_strict")
    tracemalloc.start()
    try:
        small = eye(2**22, 0, xp=xs)  # 32 MiB of arange for an empty output
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert tuple(small.shape) == (2**22, 0)
    assert peak < 1 << 20, f"{peak} bytes traced for an empty output"
    assert tuple(eye(0, 2**59, xp=xs).shape) == (0, 2**59)
    empty_batch = eye(2**20, 2**20, batch_shape=(0,), xp=xs, dtype="uint8")
    assert tuple(empty_batch.shape) == (0, 2**20, 2**20)


def test_generic_zero_elements_torch_per_matrix_k() -> None:
    # Regression: torch's RuntimeError ("Storage size calculation
    # overflowed") from the generic backend's arange(2**62).
    torch = pytest.importorskip("torch")
    t = eye(0, 2**62, batch_shape=2, k=[0, 1], xp=torch)
    assert tuple(t.shape) == (2, 0, 2**62)


def _python(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (a crash there cannot take pytest down)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_jax_zero_elements_huge_dims_do_not_crash() -> None:
    # Regression: XLA aborted the whole process ("Bad StatusOr access:
    # INVALID_ARGUMENT: overflow in static extent product") building
    # arange(2**62) for a zero-element output.
    pytest.importorskip("jax")
    code = (
        "import jax.numpy as jnp, eyelike\n"
        "print(tuple(eyelike.eye(0, 2**62, xp=jnp).shape))\n"
    )
    # In a child process: a regression aborts the interpreter.
    done = _python(code)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == str((0, 2**62))


@pytest.mark.parametrize("call", ["eye(2**62, 0)", "eye(2**31, 0, batch_shape=2**31)"])
def test_jax_zero_elements_leading_huge_dims_do_not_crash(call: str) -> None:
    pytest.importorskip("jax")
    code = (
        "import jax.numpy as jnp, eyelike\n"
        "try:\n"
        f"    print(tuple(eyelike.{call[:-1]}, xp=jnp).shape))\n"
        "except ValueError as exc:\n"
        "    print('ValueError', exc)\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr[-300:]
    assert "shape" in done.stdout or "(" in done.stdout


@pytest.mark.parametrize(
    "call",
    [
        "eyelike.eye(2**40, 0, xp=jnp)",
        "eyelike.eye(0, 0, batch_shape=(1, 1, 2**31 - 1, 0), xp=jnp)",
    ],
)
def test_jax_empty_output_beyond_memory_refused(call: str) -> None:
    # XLA spends host memory on an empty array in proportion to the dims
    # before its first zero (about 8 bytes each): beyond the machine, refuse
    # it at once instead of letting XLA run out of memory or abort.
    pytest.importorskip("jax")
    code = (
        "import jax.numpy as jnp, eyelike\n"
        "try:\n"
        f"    {call}\n"
        "except MemoryError as exc:\n"
        "    print('refused', exc)\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr[-300:]
    assert "refused" in done.stdout
    assert "no elements" in done.stdout


@pytest.mark.parametrize(
    ("n_rows", "batch"), [(2**62, (2**62,)), (2**40, (2**30,))], ids=repr
)
def test_torch_zero_element_storage_overflow_named(
    n_rows: int, batch: tuple[int, ...]
) -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="shape"):
        eye(n_rows, 0, batch_shape=batch, xp=torch)


def test_jax_empty_shapes_it_can_make_are_made() -> None:
    jnp = pytest.importorskip("jax.numpy")
    assert jnp.zeros((0, 2**62, 2**62)).shape == (0, 2**62, 2**62)  # JAX can
    result = eye(2**62, 2**62, batch_shape=(0,), xp=jnp)
    assert result.shape == (0, 2**62, 2**62)


# ------------------------------------------------- absurd batch_shape lengths


class _Endless(Sequence[int]):
    """A ``batch_shape`` of 10**12 ones that counts how much of it is read."""

    def __init__(self) -> None:
        self.reads = 0

    def __len__(self) -> int:
        return 10**12

    def __getitem__(self, index: Any) -> Any:
        self.reads += 1
        if self.reads > 10_000:
            msg = "read 10,000 entries of a 10**12-entry batch_shape"
            raise OverflowError(msg)
        return 1

    def __iter__(self) -> Iterator[int]:
        for i in range(len(self)):
            yield self[i]


def test_unrepresentable_zero_element_shape_torch() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="shape"):
        eye(2**62, 2**62, batch_shape=(0,), xp=torch)


def test_batch_shape_length_is_checked_first() -> None:
    endless = _Endless()
    with pytest.raises(ValueError, match="batch_shape"):
        eye(2, batch_shape=endless)
    assert endless.reads <= 64


def test_too_many_batch_dims_named() -> None:
    with pytest.raises(ValueError) as plain:
        eye(1, batch_shape=(1,) * 70)
    with pytest.raises(ValueError) as with_k:
        eye(1, batch_shape=(1,) * 70, k=np.zeros(1, int))
    assert "batch_shape" in str(plain.value), str(plain.value)
    assert "batch_shape" in str(with_k.value)
    assert "broadcast" not in str(with_k.value)


# ------------------------------------------ more than 2**31 elements, for real

ENOUGH = _phys() >= 12 * GiB and _available() >= 6 * GiB
NOT_ENOUGH = "needs 12 GiB of memory and 6 GiB free for a 2 GiB output"


@pytest.fixture
def _collect() -> Iterator[None]:
    yield
    gc.collect()


@pytest.mark.skipif(not ENOUGH, reason=NOT_ENOUGH)
@pytest.mark.usefixtures("_collect")
def test_numpy_over_2_31_elements_uint8() -> None:
    cols = 2**30 + 1
    a = eye(2, cols, batch_shape=(1,), dtype="uint8", k=cols - 2)
    assert a.shape == (1, 2, cols)
    assert a.size > 2**31
    assert a.dtype == np.uint8
    # Flat index 2**31 + 1 is [0, 1, cols - 1]: past any 32-bit index.
    assert a[0, 0, cols - 2] == 1
    assert a[0, 1, cols - 1] == 1
    assert a.reshape(-1)[2**31 + 1] == 1
    assert a[0, 1, cols - 2] == 0
    assert a[0, 0, cols - 1] == 0
    assert int(np.count_nonzero(a)) == 2
    del a


@pytest.mark.skipif(not ENOUGH, reason=NOT_ENOUGH)
@pytest.mark.usefixtures("_collect")
def test_numpy_over_2_31_elements_square() -> None:
    n = 46341  # n * n = 2**31 + 4633
    a = eye(n, dtype="uint8")
    assert a.size > 2**31
    assert int(np.count_nonzero(a)) == n
    for i in (0, 1, n // 2, n - 2, n - 1):
        assert a[i, i] == 1
        assert a[i, (i + 1) % n] == 0
    # The diagonal's last element sits past flat index 2**31.
    assert (n - 1) * n + (n - 1) > 2**31
    assert int(np.trace(a)) == n
    del a


@pytest.mark.skipif(not ENOUGH, reason=NOT_ENOUGH)
@pytest.mark.usefixtures("_collect")
def test_numpy_over_2_31_elements_into_reversed_out() -> None:
    base = np.empty((3, 715_827_884), dtype=np.uint8)  # 2**31 + 4 bytes
    base.fill(5)
    out = base[:, ::-1]
    cols = out.shape[1]
    result = eye(3, cols, k=cols - 3, out=out)
    assert result is out
    assert int(np.count_nonzero(base)) == 3
    for r in range(3):
        assert out[r, cols - 3 + r] == 1
        assert base[r, 2 - r] == 1  # the same element, seen from the base
    del base, out, result


@pytest.mark.skipif(not ENOUGH, reason=NOT_ENOUGH)
@pytest.mark.usefixtures("_collect")
def test_torch_over_2_31_elements_uint8() -> None:
    torch = pytest.importorskip("torch")
    n = 46341
    a = eye(n, xp=torch, dtype=torch.uint8, k=-1)
    assert a.numel() > 2**31
    assert int(torch.count_nonzero(a)) == n - 1
    assert int(a[n - 1, n - 2]) == 1
    assert int(a[n - 1, n - 1]) == 0
    assert int(a[0, 0]) == 0
    del a


@pytest.mark.parametrize("xp", _host_namespaces())
@pytest.mark.parametrize("k", [0, 1, -1, INT64_MAX, -INT64_MAX, 2**70])
@pytest.mark.parametrize(
    ("rows", "cols", "batch"),
    [(0, INT64_MAX, ()), (0, 2**40, (3,)), (2**40, 0, ()), (5, 5, (0,))],
    ids=["no rows", "no rows, batch", "no cols", "no matrices"],
)
def test_zero_elements_any_offset(
    xp: Any, k: int, rows: int, cols: int, batch: tuple[int, ...]
) -> None:
    # Regression: torch's scalar-k build asked an empty (0, 2**63 - 1)
    # matrix for its diagonal 1, whose length torch's own arithmetic
    # overflows (RuntimeError, "cannot be represented as a SymInt"). Every
    # offset, every empty shape: the shape made, or eyelike's own refusal
    # of a shape the namespace cannot make (JAX's leading dimensions).
    shape = (*batch, rows, cols)

    def build() -> Any:
        return eye(rows, cols, k=k, batch_shape=batch, xp=xp, dtype="int8")

    if xp.__name__.startswith("jax") and rows > 2**32:
        with pytest.raises((ValueError, MemoryError), match="has no elements"):
            build()
        return
    a = build()
    assert tuple(a.shape) == shape
    if xp.__name__ in ("numpy", "torch"):
        like = eye_like(a, k=k)
        assert tuple(like.shape) == shape
        assert eye(rows, cols, k=k, batch_shape=batch, out=like) is like


@pytest.mark.parametrize("xp", _host_namespaces())
@pytest.mark.parametrize("k", [[0, 1], [-1, 2**62], [INT64_MAX, -INT64_MAX]])
@pytest.mark.parametrize(
    ("rows", "cols"), [(0, 2**40), (2**40, 0)], ids=["no rows", "no cols"]
)
def test_zero_elements_per_matrix_offsets(
    xp: Any, k: list[int], rows: int, cols: int
) -> None:
    # Regression: NumPy's per-matrix mask built arange(2**40) for an empty
    # output (MemoryError, 8 TiB). A list, or an int64 array where the
    # library has one; fresh, out= and eye_like.
    shape = (2, rows, cols)
    is_jax = xp.__name__.startswith("jax")
    if is_jax and rows > 2**32:
        with pytest.raises(MemoryError, match="has no elements"):
            eye(rows, cols, k=k, batch_shape=2, xp=xp, dtype="int8")
        return
    forms: list[Any] = [k] if is_jax else [k, xp.asarray(k, dtype=xp.int64)]
    for offsets in forms:
        a = eye(rows, cols, k=offsets, batch_shape=2, xp=xp, dtype="int8")
        assert tuple(a.shape) == shape
        if xp.__name__ in ("numpy", "torch"):
            assert eye(rows, cols, k=offsets, batch_shape=2, out=a) is a
            assert tuple(eye_like(a, k=offsets).shape) == shape
