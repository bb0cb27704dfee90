"""The benchmark's cases: the CPU table's (`CPU_CASES`) and the GPU table's
(`GPU_CASES`, most important first)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["CPU_CASES", "GPU_CASES", "CpuCase", "GpuCase", "dtype_of"]

# Item sizes by name, bfloat16's included (its dtype needs ml_dtypes).
_ITEMSIZE = {"bfloat16": 2}


def itemsize(name: str) -> int:
    """Bytes per element of a dtype name."""
    return _ITEMSIZE.get(name) or np.dtype(name).itemsize


@dataclass(frozen=True)
class CpuCase:
    """One benchmark shape. ``per_matrix``: k is one int per matrix,
    ``b % (2n - 1) - (n - 1)`` for matrix b, so the batch cycles through
    every diagonal that holds a one (``k`` is then unused)."""

    batch: tuple[int, ...]
    n: int
    k: int = 0
    dtype: str = "float32"
    out: bool = False
    touch: bool = False
    per_matrix: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        return (*self.batch, self.n, self.n)

    @property
    def name(self) -> str:
        dims = "x".join(map(str, self.shape))
        extra = (" out=" if self.out else "") + (" +touch" if self.touch else "")
        k = f"b%{2 * self.n - 1}-{self.n - 1}" if self.per_matrix else self.k
        return f"{dims} {self.dtype} k={k}{extra}"

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * itemsize(self.dtype)

    @property
    def np_dtype(self) -> np.dtype[Any]:
        return dtype_of(self.dtype)

    def offsets(self) -> Any:
        """The case's k: an int, or (``per_matrix``) an int64 array."""
        if not self.per_matrix:
            return self.k
        b = np.arange(math.prod(self.batch), dtype=np.int64)
        return (b % (2 * self.n - 1) - (self.n - 1)).reshape(self.batch)

    def expected(self) -> np.ndarray[Any, Any]:
        """The output every peer must give."""
        r = np.arange(self.n)
        k = np.asarray(self.offsets())[..., None, None]
        hit = (r[None, :] - r[:, None]) == k
        return np.broadcast_to(hit, self.shape).astype(self.np_dtype)


def _cpu_cases() -> list[CpuCase]:
    cases = [CpuCase((), 3, dtype="float64"), CpuCase((4,), 3, dtype="float64")]
    # A small float32 batch: the quick run's case for JAX (float64 needs x64)
    # and for the compiled torch peers.
    cases.append(CpuCase((64,), 32))
    # One offset per matrix, 63 distinct over 64 small matrices; and a
    # 2-byte float only JAX and torch compute in (NumPy through ml_dtypes).
    cases.append(CpuCase((64,), 32, per_matrix=True))
    # The same beside each library's mask idiom at a data loader's collate
    # sizes, and at memory-bound ones (64 MiB).
    per_matrix = [((2,), 3), ((32,), 8), ((256,), 3), ((32,), 32)]
    per_matrix += [((4096,), 64), ((256,), 256)]
    cases += [CpuCase(b, n, per_matrix=True) for b, n in per_matrix]
    cases.append(CpuCase((4096,), 64, dtype="bfloat16"))
    cases += [CpuCase((4096,), 64, k) for k in (0, 1, -3)]
    cases.append(CpuCase((), 8192, touch=True))
    for dt in ("bool", "uint8", "float16", "float64"):
        cases.append(CpuCase((256,), 256, dtype=dt))
    cases += [CpuCase((4096,), 64, out=True), CpuCase((), 8192, out=True)]
    cases += [CpuCase((256,), 256, dtype=dt, out=True) for dt in ("uint8", "float64")]
    return cases


ROUNDS = 15  # timings per peer and case; medians over these
CORE_ROUNDS = 9  # the same for the cheap cases that cover every dtype


LIBRARIES = ("cupy", "torch", "jax")


def dtype_of(name: str) -> np.dtype[Any]:
    """The NumPy dtype of a case's dtype name (bfloat16: ml_dtypes')."""
    if name == "bfloat16":
        import ml_dtypes

        bf16: np.dtype[Any] = np.dtype(ml_dtypes.bfloat16)
        return bf16
    return np.dtype(name)


@dataclass(frozen=True)
class GpuCase:
    """One output shape and dtype, its k, and who takes part.

    ``per_matrix``: k is one int per matrix, ``b % (2n + 1) - n`` for matrix
    b of the flattened batch, so the batch cycles through every clamped k
    from -n to n (the first and last give all zeros). ``libs``: the
    libraries that take part. ``peers``: "all" for every idiom, "core" for
    eyelike, the limit and ``zeros`` + diagonal write only (the cheap cases
    that cover every dtype). ``rounds``: timings per peer.
    """

    batch: tuple[int, ...]
    n: int
    dtype: str
    per_matrix: bool = False
    libs: tuple[str, ...] = LIBRARIES
    peers: str = "all"
    rounds: int = ROUNDS

    @property
    def shape(self) -> tuple[int, ...]:
        return (*self.batch, self.n, self.n)

    @property
    def np_dtype(self) -> np.dtype[Any]:
        return dtype_of(self.dtype)

    @property
    def nbytes(self) -> int:
        # From the table, not the dtype: bfloat16's needs ml_dtypes.
        return math.prod(self.shape) * itemsize(self.dtype)

    @property
    def matrices(self) -> int:
        return math.prod(self.batch)

    @property
    def ones(self) -> int:
        """How many elements of the output are 1."""
        if not self.per_matrix:
            return self.matrices * self.n
        # Matrix b has k = b % (2n + 1) - n, so n - |k| ones.
        per_k = [self.n - abs(j - self.n) for j in range(2 * self.n + 1)]
        cycles, rest = divmod(self.matrices, len(per_k))
        return cycles * sum(per_k) + sum(per_k[:rest])

    def offsets(self, xp: Any) -> Any:
        """The per-matrix k as an int32 array of ``xp``, of the batch's shape."""
        b = xp.arange(self.matrices, dtype=xp.int32)
        return (b % (2 * self.n + 1) - self.n).reshape(self.batch)

    @property
    def name(self) -> str:
        k = f" k=b%{2 * self.n + 1}-{self.n}" if self.per_matrix else ""
        return f"{'x'.join(map(str, self.shape))} {self.dtype}{k}"


def _mib256(dtype: str, **options: Any) -> GpuCase:
    """A batch of 64 x 64 matrices of exactly 256 MiB in ``dtype``."""
    return GpuCase(((1 << 28) // (4096 * itemsize(dtype)),), 64, dtype, **options)


_CUPY = ("cupy",)
# Every dtype eyelike's CuPy backend makes, but float32 (the first case).
_OTHERS = (
    "bool", "int8", "uint8", "int16", "uint16", "float16", "bfloat16", "int32",
    "uint32", "int64", "uint64", "float64", "complex64", "complex128",
)  # fmt: skip
# Most important first: cases left when the time limit comes are not run.
# 1. The GPU targets (>= 90% of zeros in every dtype, ahead of every
#    idiom): the 256 MiB float32 batch on every library; per-matrix k (the
#    regular vector kernel, then the small-matrix kernel at 1 and 4 bytes);
#    the latency case; every other dtype at 256 MiB on CuPy (eyelike, the
#    limit, zeros + diagonal); torch and JAX on the dtypes both have.
# 2. Larger outputs: a 1 GiB batch and a 1 GiB matrix, and per-matrix k over
#    4 x 4 float32 matrices (64 bytes: one chunk each, the regular kernel).
GPU_CASES = [
    _mib256("float32"),
    _mib256("float32", per_matrix=True, libs=_CUPY),
    GpuCase((), 3, "float32"),
    GpuCase((1 << 24,), 4, "uint8", per_matrix=True, libs=_CUPY),
    GpuCase((1 << 23,), 3, "float32", per_matrix=True, libs=_CUPY),
    *(
        _mib256(dtype, libs=_CUPY, peers="core", rounds=CORE_ROUNDS)
        for dtype in _OTHERS
    ),
    *(
        _mib256(dtype, libs=("torch", "jax"))
        for dtype in ("bool", "uint8", "float16", "float64")
    ),
    GpuCase((65536,), 64, "float32"),
    GpuCase((), 16384, "float32"),
    GpuCase((1 << 24,), 4, "float32", per_matrix=True, libs=_CUPY),
]


CPU_CASES = _cpu_cases()
