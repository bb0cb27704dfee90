"""CPU checks of the CUDA source used by the CuPy backend (kernels/eye.cuh).

No GPU is needed. tests/kernel/kernel_shim/host_shim.cpp compiles the real header
with g++ and runs the backend's operation strings in a CuPy-shaped loop, with
the launch decisions and constants of ``cupy_plan.plan``; its output is compared
byte for byte with a NumPy reference built independently from
``col - row == k``: the element path over every layout the host sends it,
the vector path (C-contiguous outputs, 64-byte chunks) exhaustively over
small shapes, every offset, k mode, element width and misaligned start, and
at sampled chunks of outputs past 2**31 elements. When nvcc is available,
tests/kernel/kernel_shim/ptx_check.cu compiles the same header for the device the
way CuPy lays a kernel out. (test_kernel_nvrtc.py builds the very source
CuPy generates, with NVRTC; test_kernel_sass.py counts its instructions.)
"""

from __future__ import annotations

import concurrent.futures
import itertools
import random
import re
import shutil
import subprocess
import types
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.kernel_build import DTYPES, ITEMSIZE

# The CuPy backend's own ElementwiseKernel operation strings and launch
# planning (importing the module does not import CuPy): both compiled
# programs run exactly these.
from eyelike._backends import cupy as _cupy
from eyelike._backends.cupy import planning as cupy_plan
from eyelike._backends.cupy.planning import OP_PER_MATRIX, OP_SCALAR, VECTOR_OPS

REPO = Path(__file__).resolve().parents[2]
HEADER = REPO / "kernels" / "eye.cuh"
SHIM_DIR = Path(__file__).resolve().parent / "kernel_shim"


INT32_LIMIT = 2**31  # the host uses I = int iff B*R*C < 2**31
PTRDIFF_LIMIT = 2**63  # CuPy's loop index i is ptrdiff_t


def np_dtype(name: str) -> np.dtype[Any]:
    """NumPy's dtype for a name, ml_dtypes' bfloat16 included."""
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def clamp_k(k: int, n_rows: int, n_cols: int) -> int:
    """Clamp k into [-R, C] exactly as the host does before launching."""
    return min(max(k, -n_rows), n_cols)


def index_widths(size: int) -> list[int]:
    """Index widths to check: 64 always works, 32 only below 2**31."""
    return [32, 64] if size < INT32_LIMIT else [64]


def raw_ks(n_rows: int, n_cols: int) -> list[int]:
    """Offsets around every boundary, before clamping."""
    near = [0, 1, -1, 2, -2]
    edges = [n_rows, -n_rows, n_cols, -n_cols]
    edges_pm = [e + d for e in edges for d in (-1, 1)]
    huge = [2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, -(2**63)]
    return near + edges + edges_pm + huge + [2**64]


def clamped_ks(n_rows: int, n_cols: int) -> list[int]:
    return sorted({clamp_k(k, n_rows, n_cols) for k in raw_ks(n_rows, n_cols)})


def reference(shape: tuple[int, int, int], ks: Sequence[int]) -> np.ndarray:
    """Boolean (B, R, C) diagonal mask straight from the definition."""
    _, n_rows, n_cols = shape
    rows, cols = np.indices((n_rows, n_cols), dtype=np.int64)
    offsets = np.asarray(ks, dtype=np.int64)[:, None, None]
    mask: np.ndarray = (cols - rows)[None, :, :] == offsets
    return mask


def expected_at(shape: tuple[int, int, int], kk: dict[int, int], i: int) -> bool:
    """Value at flat index i, with Python's exact integer arithmetic."""
    _, n_rows, n_cols = shape
    b, r = divmod(i, n_rows * n_cols)
    row, col = divmod(r, n_cols)
    return col - row == kk[b]


def compile_flags() -> list[str]:
    return ["-std=c++17", "-O1", "-Wall", "-Wextra", f"-I{HEADER.parent}"]


@pytest.fixture(scope="session")
def ops_header(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """OP_SCALAR / OP_PER_MATRIX as macros, for `-include` on both compilers."""
    path = tmp_path_factory.mktemp("ops") / "eyelike_ops.h"
    path.write_text(
        f"#define EYELIKE_OP_SCALAR {OP_SCALAR}\n"
        f"#define EYELIKE_OP_PER_MATRIX {OP_PER_MATRIX}\n"
        f"#define EYELIKE_OP_VECTOR {VECTOR_OPS['scalar']}\n"
        f"#define EYELIKE_OP_VECTOR_PER_MATRIX {VECTOR_OPS['per_matrix']}\n"
        f"#define EYELIKE_OP_VECTOR_PER_SMALL_MATRIX {VECTOR_OPS['small']}\n"
    )
    return path


@pytest.fixture(scope="session")
def shim(tmp_path_factory: pytest.TempPathFactory, ops_header: Path) -> Path:
    """host_shim.cpp built once. UBSan, when the toolchain has it, turns any
    signed overflow in the index arithmetic into a failing exit status."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not on PATH: cannot build the CPU shim of eye.cuh")
    exe = tmp_path_factory.mktemp("shim") / "host_shim"
    base = [gxx, *compile_flags(), "-include", str(ops_header)]
    base += [str(SHIM_DIR / "host_shim.cpp"), "-o", str(exe)]
    ubsan = ["-fsanitize=undefined", "-fno-sanitize-recover=all"]
    proc = subprocess.run(base[:1] + ubsan + base[1:], capture_output=True, text=True)
    if proc.returncode != 0:  # e.g. no libubsan: build without it
        proc = subprocess.run(base, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    # Warnings in the header would surface in every CuPy compile too.
    assert "eye.cuh" not in proc.stderr, proc.stderr
    return exe


def run_shim(shim: Path, lines: Sequence[str]) -> list[str]:
    """All cases in one subprocess; one answer line per input line."""
    proc = subprocess.run(
        [str(shim)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    answers = proc.stdout.splitlines()
    assert len(answers) == len(lines)
    return answers


def small_shapes() -> Iterator[tuple[int, int, int]]:
    for b in (1, 2, 3):
        for n_rows in (0, 1, 2, 3, 5):
            for n_cols in (0, 1, 2, 4, 7):
                yield (b, n_rows, n_cols)
    yield from [(1, 17, 33), (2, 33, 17), (4, 1, 64), (3, 64, 1), (2, 8, 8)]


def check_answers(
    lines: Sequence[str],
    answers: Sequence[str],
    expected: Sequence[bytes],
) -> None:
    bad = [
        f"{line[:120]}\n  got  {got[:80]}\n  want {want.hex()[:80]}"
        for line, got, want in zip(lines, answers, expected, strict=True)
        if got != want.hex()
    ]
    assert not bad, f"{len(bad)} of {len(lines)} cases differ:\n" + "\n".join(bad[:10])


def test_header_exists_and_defines_eyelike_value() -> None:
    assert HEADER.is_file(), f"missing {HEADER}"
    text = HEADER.read_text()
    assert re.search(
        r"template\s*<\s*typename\s+\w+\s*,\s*typename\s+\w+\s*>\s*"
        r"EYELIKE_DEVICE\s+inline\s+\w+\s+eyelike_value\s*\(",
        text,
    )
    assert "#ifndef EYELIKE_DEVICE" in text
    # The header goes into NVRTC after CuPy's headers: it must include nothing.
    assert "#include" not in text
    # Every name it defines at file scope is namespaced by prefix: functions
    # (declared on a line of their own starting with an EYELIKE_ macro),
    # types, macros.
    functions = [
        re.search(r"(\w+)\s*\(", line).group(1)  # type: ignore[union-attr]
        for line in text.splitlines()
        if re.match(r"EYELIKE_(DEVICE|NOINLINE)\b", line)
    ]
    types = re.findall(r"(?m)^struct\s+(?:alignas\(\d+\)\s+)?(\w+)", text)
    macros = re.findall(r"#define\s+(\w+)", text)
    assert {
        "eyelike_value",
        "eyelike_vector",
        "eyelike_vector_batched_k",
        "eyelike_vector_batched_k_small",
    } <= set(functions)
    assert "eyelike_vector_edge" in functions
    assert types
    assert all(f.startswith("eyelike_") for f in functions), functions
    assert all(t.startswith("eyelike_") for t in types), types
    assert all(m.startswith("EYELIKE_") for m in macros), macros
    # The fast path's chunk is what the host plans with.
    chunk = re.search(r"#define\s+EYELIKE_CHUNK_BYTES\s+(\d+)u", text)
    assert chunk is not None
    assert int(chunk.group(1)) == cupy_plan.CHUNK_BYTES


def test_header_needs_no_other_header(tmp_path: Path) -> None:
    """Compile the header alone with no system headers and strict warnings,
    instantiating both paths for every builtin type and index width: proves
    it relies on nothing NVRTC might lack, and converts nothing silently."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not on PATH")
    builtin = [
        "bool",
        "signed char",
        "unsigned char",
        "short",
        "unsigned short",
        "int",
        "unsigned int",
        "long long",
        "unsigned long long",
        "float",
        "double",
    ]
    src = '#define EYELIKE_DEVICE\n#include "eye.cuh"\n'
    for t in builtin:
        for i, u in (("int", "unsigned int"), ("long long", "unsigned long long")):
            src += f"template {t} eyelike_value<{t}, {i}>({i}, {i}, {i});\n"
            src += (
                f"template void eyelike_vector<{t}, {u}>({t}*, {u}, {u}, {u}, "
                f"{u}, {u}, {u}, {u}, {u}, {u}, unsigned long long, {u}, {u}, "
                "unsigned long long, unsigned long long);\n"
                f"template void eyelike_vector_batched_k<{t}, {u}, {i}>({t}*, "
                f"{u}, {u}, {u}, {u}, {u}, {u}, {u}, {u}, {u}, "
                f"unsigned long long, {u}, const {i}*);\n"
                f"template void eyelike_vector_batched_k_small<{t}, {u}, {i}>("
                f"{t}*, {u}, {u}, {u}, {u}, {u}, {u}, {u}, "
                f"unsigned long long, {u}, const {i}*);\n"
            )
    (tmp_path / "alone.cpp").write_text(src)
    cmd = [gxx, "-std=c++17", "-nostdinc", "-Wall", "-Wextra", "-Wconversion"]
    cmd += ["-Wsign-conversion", "-Wshadow", "-Werror", f"-I{HEADER.parent}"]
    cmd += ["-c", "alone.cpp", "-o", "alone.o"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_shim_matches_numpy_for_all_dtypes_shapes_and_offsets(
    shim: Path,
) -> None:
    rng = random.Random(20240611)
    lines: list[str] = []
    expected: list[bytes] = []
    skipped_empty = 0
    for shape in small_shapes():
        b, n_rows, n_cols = shape
        size = b * n_rows * n_cols
        if size == 0:
            # The backend returns an empty array without launching.
            skipped_empty += 1
            continue
        ks = clamped_ks(n_rows, n_cols)
        cases: list[tuple[str, list[int]]] = [("s", [k]) for k in ks]
        # Per-matrix offsets: mixes of boundary values, 3 draws per shape.
        cases += [("m", [rng.choice(ks) for _ in range(b)]) for _ in range(3)]
        for mode, case_ks in cases:
            mask = reference(shape, case_ks * b if mode == "s" else case_ks)
            for bits in index_widths(size):
                for dtype in DTYPES:
                    k_text = " ".join(map(str, case_ks))
                    lines.append(
                        f"E {dtype} {bits} {b} {n_rows} {n_cols} {mode} {k_text}"
                    )
                    expected.append(mask.astype(np_dtype(dtype)).tobytes())
    assert skipped_empty > 0
    assert len(lines) > 5000  # thousands of cases, in one subprocess
    check_answers(lines, run_shim(shim, lines), expected)


# Virtual shapes far beyond anything allocatable; every B*R*C < 2**63.
HUGE_SHAPES = [
    (1, 2**62, 1),
    (1, 1, 2**62),
    (2, 2**31, 2**31 - 1),
    (1, 3037000499, 3037000499),  # R = C = floor(sqrt(2**63 - 1))
    (2**40, 3, 5),
    (1000003, 2**31 + 11, 4095),
    (5, 2**33 + 1, 2**27 - 1),
    (3, 2**61, 1),
]
# Shapes where I = int still applies, with R or C near 2**31.
INT_SIZED_SHAPES = [
    (1, 1, 2**31 - 1),
    (1, 2**31 - 1, 1),
    (1, 46340, 46340),
    (3, 715827882, 1),
    (2, 1, 2**30 - 1),
    (7, 3, 102261126),
]


def sample_case(
    shape: tuple[int, int, int], per_matrix: bool, rng: random.Random
) -> tuple[dict[int, int], list[int]]:
    """Offsets for the batches touched, and flat indices to evaluate: on and
    next to the diagonal, at row and matrix boundaries, plus random ones."""
    b_count, n_rows, n_cols = shape
    mat = n_rows * n_cols
    size = b_count * mat
    batches = {0, 1, b_count // 2, b_count - 1}
    batches |= {rng.randrange(b_count) for _ in range(3)}
    batches = {b for b in batches if 0 <= b < b_count}
    ks = [*clamped_ks(n_rows, n_cols), rng.randint(-n_rows, n_cols)]
    shared = rng.choice(ks)
    kk = {b: rng.choice(ks) if per_matrix else shared for b in batches}
    indices: set[int] = set()
    for b, k in kk.items():
        base = b * mat
        indices |= {base, base + 1, base + mat - 1, base + mat - 2}
        rows = {0, 1, n_rows // 2, n_rows - 1, n_rows - 2}
        rows |= {-k, n_cols - 1 - k, rng.randrange(n_rows)}  # diagonal ends
        for row in rows:
            if not 0 <= row < n_rows:
                continue
            for col in (row + k - 1, row + k, row + k + 1, 0, n_cols - 1):
                if 0 <= col < n_cols:
                    indices.add(base + row * n_cols + col)
        indices |= {base + rng.randrange(mat) for _ in range(8)}
    return kk, sorted(i for i in indices if 0 <= i < size)


def test_shim_sample_mode_beyond_int32(shim: Path) -> None:
    rng = random.Random(7)
    lines: list[str] = []
    expected: list[bytes] = []
    for shape in HUGE_SHAPES + INT_SIZED_SHAPES:
        b_count, n_rows, n_cols = shape
        size = b_count * n_rows * n_cols
        assert size < PTRDIFF_LIMIT
        for per_matrix in (False, True):
            kk, indices = sample_case(shape, per_matrix, rng)
            if per_matrix:
                pairs = " ".join(f"{b} {k}" for b, k in sorted(kk.items()))
                k_text = f"m {len(kk)} {pairs}"
            else:
                k_text = f"s {next(iter(kk.values()))}"
            idx_text = f"{len(indices)} " + " ".join(map(str, indices))
            values = np.array([expected_at(shape, kk, i) for i in indices])
            # Probe both values: ones wherever some diagonal is non-empty
            # (k = -R or k = C leaves a matrix all zeros), and zeros always.
            if any(-n_rows < k < n_cols for k in kk.values()):
                assert values.any()
            assert not values.all()
            for bits in index_widths(size):
                for dtype in DTYPES:
                    lines.append(
                        f"S {dtype} {bits} {b_count} {n_rows} {n_cols} "
                        f"{k_text} {idx_text}"
                    )
                    expected.append(values.astype(np_dtype(dtype)).tobytes())
    assert any(line.split()[2] == "32" for line in lines)
    check_answers(lines, run_shim(shim, lines), expected)


@pytest.mark.parametrize(
    "line",
    [
        "E int8 32 1 65536 32768 s 0",  # I = int but B*R*C == 2**31
        "E int8 32 1 3 3 s 4",  # k not clamped into [-R, C]
        "E int8 64 1 0 3 s 0",  # empty outputs are never launched
        "S int8 64 3 3037000499 3037000499 s 0 1 0",  # B*R*C >= 2**63
        "E float128 64 1 2 2 s 0",
    ],
)
def test_shim_rejects_what_the_host_never_sends(shim: Path, line: str) -> None:
    """The shim refuses out-of-contract input instead of emulating it."""
    proc = subprocess.run(
        [str(shim)], input=line + "\n", capture_output=True, text=True
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)


# ------------------------------------------------------------ vector path

WIDTHS = [1, 2, 4, 8, 16]  # element sizes in bytes
BY_WIDTH = {1: "uint8", 2: "bfloat16", 4: "float32", 8: "complex64", 16: "complex128"}
# The dtypes the sweep runs, one per width (test_vector_every_dtype_and_
# misaligned_start runs all 15, for every way T(1) lies in the words).
SWEEP_DTYPES = list(BY_WIDTH.values())


def one_bytes(dtype: str) -> bytes:
    return np.ones(1, dtype=np_dtype(dtype)).tobytes()


def named(scalars: Sequence[tuple[str, int]]) -> str:
    return " ".join(f"{name}={value}" for name, value in scalars)


def k_text(mode: str, ks: Sequence[int]) -> str:
    return f"s {ks[0]}" if mode == "s" else "m " + " ".join(map(str, ks))


def small_token(launch: cupy_plan.Launch, itemsize: int) -> str:
    """The shim's ``small=`` token: which per-matrix kernel `plan` chose."""
    return f"small={itemsize} " if launch.small else ""


def vector_launch(
    shape: tuple[int, int, int], k: int | None, dtype: str, head: int
) -> cupy_plan.Launch:
    """The single vector launch `plan` makes for an output `head` elements
    past a 16-byte boundary (cupy.empty gives 256-byte alignment), at any
    size (``vector_from=0``: a small output's default is the element path)."""
    itemsize = np_dtype(dtype).itemsize
    launches = cupy_plan.plan(
        shape, k, itemsize, contiguous=True, address=256 + head * itemsize,
        vector_from=0,
    )  # fmt: skip
    assert len(launches) == 1
    (launch,) = launches
    assert launch.vector
    assert dict(launch.scalars)["head"] == head
    return launch


@pytest.mark.parametrize("dtype", DTYPES)
def test_plan_refuses_every_misaligned_address(dtype: str) -> None:
    """Bug (issue 22): a contiguous output whose address is not a multiple
    of its item size was planned onto the element kernel, whose stores of
    T are then misaligned: a device fault. `plan` refuses every such
    address (complex64 at 4 mod 8 and complex128 at 8 mod 16 included:
    CuPy's complex<T> is aligned to its whole size), for both k modes and
    either layout, and plans every aligned one."""
    itemsize = ITEMSIZE[dtype]
    for base, shape, k, contiguous in itertools.product(
        (256, 4096 + 64, 2**40),
        [(3, 3), (4, 3, 3), (70, 1, 1)],
        (1, None),
        (True, False),
    ):
        for offset in range(itemsize):
            address = base + offset
            if offset == 0:
                assert cupy_plan.plan(
                    shape, k, itemsize, contiguous=contiguous, address=address
                )
                continue
            with pytest.raises(ValueError, match=f"out starts at address {address:#x}"):
                cupy_plan.plan(
                    shape, k, itemsize, contiguous=contiguous, address=address
                )
    if dtype.startswith("complex"):
        with pytest.raises(ValueError, match=f"need {itemsize}-byte alignment"):
            cupy_plan.plan(
                (2, 2), 0, itemsize, contiguous=True, address=256 + itemsize // 2
            )


@pytest.mark.parametrize("dtype", DTYPES)
def test_cupy_backend_refuses_a_misaligned_out_before_launch(dtype: str) -> None:
    """The backend's out= check (run before anything is written, with no
    GPU needed: it reads the array's pointer, strides and shape only)
    refuses a misaligned first element or a stride that is not a multiple
    of the item size along a dimension longer than one, and lets through
    what is aligned, empty outs, and odd strides on dimensions of one."""
    itemsize = ITEMSIZE[dtype]
    backend = _cupy.CuPyBackend()  # no CuPy needed: its namespace is read on use

    def fake(ptr: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> Any:
        size = int(np.prod(shape))
        return types.SimpleNamespace(
            data=types.SimpleNamespace(ptr=ptr), itemsize=itemsize,
            shape=shape, strides=strides, size=size,
        )  # fmt: skip

    row = 3 * itemsize
    backend._out_strides(fake(512, (2, 3), (row, itemsize)))
    backend._out_strides(fake(513, (0, 3), (row, itemsize)))  # empty
    backend._out_strides(fake(512, (1, 3), (row + 1, itemsize)))  # dim of one
    if itemsize == 1:
        return
    for offset in range(1, itemsize):
        with pytest.raises(ValueError, match="out starts at address 0x"):
            backend._out_strides(fake(512 + offset, (2, 3), (row, itemsize)))
        with pytest.raises(ValueError, match=r"out has strides \("):
            backend._out_strides(fake(512, (2, 3), (row + offset, itemsize)))


def test_plan_chooses_the_path_and_constants() -> None:
    """The host decisions the shim tests below rely on: which path, which
    index width, how many launches, and that the address only moves `head`
    (and with it the thread count)."""
    plan = cupy_plan.plan
    for itemsize in WIDTHS:
        chunk = 64 // itemsize
        for shape in [(3, 5, 7), (1, 1, 1), (2, 8, 8), (4, 1, 64), (7, 3, 3)]:
            b, r, c = shape
            size = b * r * c
            for k in (0, None):
                for head in range(16 // itemsize):
                    address = 4096 + head * itemsize
                    (got,) = plan(
                        shape, k, itemsize, contiguous=True, address=address,
                        vector_from=0,
                    )  # fmt: skip
                    # By default, an output under VECTOR_FROM_BYTES: the
                    # element path (its launch costs the host less).
                    (default,) = plan(
                        shape, k, itemsize, contiguous=True, address=address
                    )
                    assert not default.vector
                    small = r * c * itemsize < 64
                    # Every contiguous, element-aligned output: the vector
                    # path, per-matrix k over small matrices included.
                    assert got.vector
                    assert got.small == (k is None and small)
                    assert (got.start, got.stop, got.wide) == (0, b, False)
                    values = dict(got.scalars)
                    assert values["head"] == head
                    assert got.threads == whole_warps(-(-(size + head) // chunk))
                    assert values["n"] == size
                    (base,) = plan(
                        shape, k, itemsize, contiguous=True, address=4096,
                        vector_from=0,
                    )  # fmt: skip
                    assert got.scalars == tuple(
                        (n, head if n == "head" else v) for n, v in base.scalars
                    )
                    names = tuple(n for n, _ in got.scalars)
                    assert names == cupy_plan.VECTOR_PARAMS[got.kind]
                    if got.small:  # a subset of the other kernel's scalars
                        big = cupy_plan.vector_scalars(r, c, b, None, 32, head)
                        assert set(got.scalars) < set(big)
                # Not contiguous: the element path.
                for contiguous, address in [(False, 4096)]:
                    (got,) = plan(
                        shape, k, itemsize, contiguous=contiguous, address=address
                    )
                    assert not got.vector
                    assert (got.start, got.stop) == (0, b)
                    want = [("n_cols", c), ("mat_size", r * c)]
                    assert list(got.scalars) == want + ([] if k is None else [("k", k)])
    # Past 2**31 elements: 32-bit slices of whole matrices, or one 64-bit
    # launch when a matrix alone has 2**31 elements.
    for shape, itemsize in [
        ((2**20, 64, 64), 1),
        ((3, 2**30, 1), 2),
        ((2**33, 1, 1), 4),
        ((1000003, 3, 4095), 16),
    ]:
        b, r, c = shape
        mat = r * c
        for k in (1, None):
            launches = plan(shape, k, itemsize, contiguous=True, address=512)
            assert launches[0].start == 0
            assert launches[-1].stop == b
            for one, two in itertools.pairwise(launches):
                assert one.stop == two.start
            for launch in launches:
                values = dict(launch.scalars)
                first = 512 + launch.start * mat * itemsize
                assert values["head"] == (first % 16) // itemsize
                assert values["n"] == (launch.stop - launch.start) * mat < 2**31
                assert launch.vector
                assert not launch.wide
                assert launch.small == (k is None and mat * itemsize < 64)
            assert len(launches) == -(-b // ((2**31 - 1) // mat))
            (element,) = plan(shape, k, itemsize, contiguous=False, address=512)
            assert element.wide
    # The comb of a long row is bit 0 alone (and costs nothing to compute).
    assert cupy_plan.vector_scalars(1, 2**62, 1, 0, 64, 0)[8] == ("comb", 1)
    for shape in [(2, 2**31, 1), (3, 46341, 46341), (1, 3037000499, 3037000499)]:
        (wide,) = plan(shape, 0, 1, contiguous=True, address=512)
        assert wide.vector
        assert wide.wide
        (narrow,) = plan((1, 2**31 - 1, 1), 0, 1, contiguous=True, address=512)
        assert not narrow.wide


def test_small_outputs_take_the_element_path() -> None:
    """The threshold: a contiguous output of fewer than VECTOR_FROM_BYTES
    bytes takes the element path (its launch passes fewer scalars, which is
    most of a small call's time), one of that many bytes or more the vector
    path, for either k mode and every width; ``vector_from`` moves it."""
    limit = cupy_plan.VECTOR_FROM_BYTES
    for itemsize in WIDTHS:
        elements = limit // itemsize
        for k in (1, None):
            for b, vector in [(elements // 16 - 1, False), (elements // 16, True)]:
                shape = (b, 4, 4)
                (got,) = cupy_plan.plan(
                    shape, k, itemsize, contiguous=True, address=512
                )
                assert got.vector == vector, (itemsize, k, shape)
                (forced,) = cupy_plan.plan(
                    shape, k, itemsize, contiguous=True, address=512, vector_from=0
                )
                assert forced.vector
                (late,) = cupy_plan.plan(
                    shape, k, itemsize, contiguous=True, address=512,
                    vector_from=limit * 2,
                )  # fmt: skip
                assert not late.vector


def test_rocm_keeps_every_output_off_the_vector_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bug (review): the vector kernel's warp exchange assumes CUDA's 32-lane
    warps; under ROCm's 64-lane wavefronts it would mix the halves of each
    wavefront. Where CuPy runs on ROCm (``cupy.cuda.runtime.is_hip``), the
    backend's `vector_from` plans no vector launch at any size."""
    cupy = pytest.importorskip("cupy")
    from eyelike._backends import cupy as backend

    assert backend.vector_from() == cupy_plan.VECTOR_FROM_BYTES
    backend.vector_from.cache_clear()
    monkeypatch.setattr(cupy.cuda.runtime, "is_hip", True)
    try:
        (launch,) = cupy_plan.plan(
            (64, 64, 64), 0, 4, contiguous=True, address=512,
            vector_from=backend.vector_from(),
        )  # fmt: skip
        assert not launch.vector
    finally:
        backend.vector_from.cache_clear()


def test_offsets_come_in_the_vector_kernels_index_type() -> None:
    """Bug: the pipeline's offsets giving per-matrix k in another type than the
    vector kernel reads makes `eye` convert k once more on every call (as
    many bytes as the output when matrices are small). For every shape, the
    type is the launches' index type, and every clamped k fits it."""
    for r, c in [(1, 1), (3, 3), (64, 64), (2**31 - 1, 1), (46341, 46341),
                 (2**31, 1), (1, 2**31), (3037000499, 3037000499)]:  # fmt: skip
        launches = cupy_plan.plan(
            (2, r, c), None, 4, contiguous=True, address=512, vector_from=0
        )
        want = np.int64 if launches[0].wide else np.int32
        assert {launch.wide for launch in launches} == {launches[0].wide}
        assert cupy_plan.offsets_dtype(r, c) is want
        info = np.iinfo(want)
        assert info.min <= -r
        assert c <= info.max


def divisor_cases(bits: int, rng: random.Random) -> dict[int, list[int]]:
    """Divisors (as the host ever sends them: below 2**(bits-1), or exactly
    2**(bits-1), which C + 1 can be) and numerators below 2**(bits-1)."""
    top = 2 ** (bits - 1)
    divisors = set(range(1, 70)) | {top, top - 1, top // 3, 3**19, 10**9 + 7}
    divisors |= {2**e + d for e in range(1, bits - 1) for d in (-1, 0, 1)}
    divisors |= {rng.randrange(1, top) for _ in range(40)}
    cases: dict[int, list[int]] = {}
    for d in sorted(x for x in divisors if 1 <= x <= top):
        nums = {0, 1, d - 1, d, d + 1, top - 1, top - 2, 2 * d - 1, 2 * d}
        nums |= {(top - 1) // d * d + e for e in (-1, 0, 1)}
        nums |= {rng.randrange(top) for _ in range(20)}
        nums |= {m * d + e for m in (3, 7, 1000) for e in (-1, 0, 1)}
        cases[d] = sorted(n for n in nums if 0 <= n < top)
    return cases


@pytest.mark.parametrize("bits", [32, 64])
def test_divide_by_magic_numbers_is_exact(shim: Path, bits: int) -> None:
    """`divider` (host) and `eyelike_divide` (header) give n // d exactly,
    for every divisor and numerator range the kernels use."""
    rng = random.Random(bits)
    cases = divisor_cases(bits, rng)
    lines = []
    for d, nums in cases.items():
        magic, shift = cupy_plan.divider(d, bits)
        assert 0 < magic < 2**bits
        lines.append(f"D {bits} {magic} {shift} " + " ".join(map(str, nums)))
    answers = run_shim(shim, lines)
    for (d, nums), answer in zip(cases.items(), answers, strict=True):
        got = [int(x) for x in answer.split()]
        assert got == [n // d for n in nums], d


def test_vector_every_dtype_and_misaligned_start(shim: Path) -> None:
    """The vector operation string, run as CuPy runs it, for all 15 dtypes
    and every address an element-aligned output can start at (16 / itemsize
    of them), over the small shapes and batches of tiny matrices, both k
    modes (per-matrix k over matrices under 64 bytes: the small-matrix
    kernel): the bytes of the output equal NumPy's, and the 64 bytes on
    either side stay untouched."""
    rng = random.Random(11)
    lines: list[str] = []
    expected: list[str] = []
    small_seen = 0
    many = [(70, 1, 1), (67, 1, 2), (41, 2, 3), (23, 3, 2), (9, 4, 5)]
    for shape in [*small_shapes(), *many]:
        b, n_rows, n_cols = shape
        if b * n_rows * n_cols == 0:
            continue
        ks = clamped_ks(n_rows, n_cols)
        cases = [("s", [k] * b) for k in rng.sample(ks, min(4, len(ks)))]
        cases += [("m", [rng.choice(ks) for _ in range(b)]) for _ in range(2)]
        for dtype in DTYPES:
            itemsize = np_dtype(dtype).itemsize
            for head in range(16 // itemsize):
                for mode, case_ks in cases:
                    k = case_ks[0] if mode == "s" else None
                    launch = vector_launch(shape, k, dtype, head)
                    small_seen += launch.small
                    lines.append(
                        f"V {dtype} 32 {b} {n_rows} {n_cols} "
                        f"{k_text(mode, case_ks)} threads={launch.threads} "
                        f"{small_token(launch, itemsize)}{named(launch.scalars)}"
                    )
                    values = reference(shape, case_ks).astype(np_dtype(dtype))
                    guard = b"\xa5" * 64
                    pad = b"\xa5" * (head * itemsize)
                    expected.append((guard + pad + values.tobytes() + guard).hex())
    assert len(lines) > 10000
    assert small_seen > 2000
    bad = [
        line
        for line, got, want in zip(lines, run_shim(shim, lines), expected, strict=True)
        if got != want
    ]
    assert not bad, f"{len(bad)} of {len(lines)} differ, e.g.\n" + "\n".join(bad[:5])


def mask_lines(max_side: int) -> Iterator[str]:
    """NumPy's value mask of every R x C matrix (R, C <= max_side) for every
    k in [-R, C], as the shim's M lines."""
    sides = range(1, max_side + 1)
    yield from mask_lines_for([(r, c) for r in sides for c in sides])


def mask_lines_for(shapes: Sequence[tuple[int, int]]) -> Iterator[str]:
    """The M lines of the R x C matrices listed, every k in [-R, C]."""
    for n_rows, n_cols in shapes:
        rows, cols = np.indices((n_rows, n_cols))
        ks = np.arange(-n_rows, n_cols + 1)
        masks = (cols - rows)[None] == ks[:, None, None]
        packed = np.packbits(masks.reshape(len(ks), -1), axis=1, bitorder="little")
        for k, row in zip(ks.tolist(), packed, strict=True):
            yield f"M {n_rows} {n_cols} {k} {row.tobytes().hex()}"


SWEEP_SIDE = 40


def run_shim_split(
    shim: Path, setup: Sequence[str], lines: Sequence[str], parts: int = 2
) -> list[str]:
    """run_shim over `parts` processes at once (the setup lines go to each)."""
    size = -(-len(lines) // parts)
    chunks = [
        list(setup) + list(lines[j : j + size]) for j in range(0, len(lines), size)
    ]
    with concurrent.futures.ThreadPoolExecutor(len(chunks)) as pool:
        results = list(pool.map(lambda chunk: run_shim(shim, chunk), chunks))
    answers: list[str] = []
    for result in results:
        assert all(a == "ok" for a in result[: len(setup)])
        answers += result[len(setup) :]
    return answers


def small_widths(n_rows: int, n_cols: int, n_mats: int) -> str:
    """The W line's ``small=`` token for per-matrix k: the widths for which
    `plan` takes the small-matrix kernel. Checks on the way that `plan`
    takes the vector path at every width, and that the small kernel's
    scalars are those of the other per-matrix kernel, which the W line
    carries (the shim's `head` replaced, per width, as `plan` would)."""
    big = cupy_plan.vector_scalars(n_rows, n_cols, n_mats, None, 32, 0)
    widths = []
    for width in WIDTHS:
        (launch,) = cupy_plan.plan(
            (n_mats, n_rows, n_cols), None, width, contiguous=True, address=256,
            vector_from=0,
        )  # fmt: skip
        assert launch.vector
        if launch.small:
            assert set(launch.scalars) <= set(big)
            widths.append(str(width))
        else:
            assert launch.scalars == big
    return f"small={','.join(widths)} " if widths else ""


def test_vector_64_bit_launches_byte_for_byte(shim: Path) -> None:
    """Bug (review): the 64-bit kernel (U = unsigned long long), run by
    the host only for matrices of 2**31 elements or more, was checked on the
    CPU only chunk by chunk (X), never through its warp stores: its first
    warp's wrapped base, its whole-warp pointers, its chunks that cross two
    matrices (written element by element there). Here it fills small
    outputs (`any_size=1`) at every misaligned start, every dtype, scalar
    and per-matrix k (matrices of a chunk or more: the small-matrix kernel
    is 32-bit only), byte for byte against NumPy, guards untouched."""
    rng = random.Random(17)
    lines: list[str] = []
    expected: list[str] = []
    for b, n_rows, n_cols in [(3, 5, 7), (2, 17, 33), (40, 8, 8), (5, 1, 100)]:
        ks = clamped_ks(n_rows, n_cols)
        for dtype in DTYPES:
            itemsize = np_dtype(dtype).itemsize
            for head in range(16 // itemsize):
                per_matrix = n_rows * n_cols * itemsize >= 64
                modes = ["s", "m"] if per_matrix else ["s"]
                for mode in modes:
                    case_ks = (
                        [rng.choice(ks)] * b
                        if mode == "s"
                        else [rng.choice(ks) for _ in range(b)]
                    )
                    k = case_ks[0] if mode == "s" else None
                    scalars = cupy_plan.vector_scalars(
                        n_rows, n_cols, b, k, 64, head, False
                    )
                    chunks = -(-(b * n_rows * n_cols + head) * itemsize // 64)
                    lines.append(
                        f"V {dtype} 64 {b} {n_rows} {n_cols} "
                        f"{k_text(mode, case_ks)} threads={whole_warps(chunks)} "
                        f"any_size=1 {named(scalars)}"
                    )
                    values = reference((b, n_rows, n_cols), case_ks)
                    guard = b"\xa5" * 64
                    pad = b"\xa5" * (head * itemsize)
                    body = values.astype(np_dtype(dtype)).tobytes()
                    expected.append((guard + pad + body + guard).hex())
    assert len(lines) > 300
    bad = [
        line
        for line, got, want in zip(lines, run_shim(shim, lines), expected, strict=True)
        if got != want
    ]
    assert not bad, f"{len(bad)} of {len(lines)} differ, e.g.\n" + "\n".join(bad[:5])


def test_vector_exhaustive_small_shapes(shim: Path) -> None:
    """Every R, C <= 40, every clamped k, scalar k over B = 1 and 3 matrices
    and per-matrix k with each k as the middle of three matrices between
    random neighbours, widths 1/2/4/8/16 bytes, all on the vector path (the
    small-matrix kernel for per-matrix k over matrices under 64 bytes); the
    misaligned start cycles through all 16 / itemsize values from one k to
    the next. The shim compares every byte with NumPy's masks and T(1)
    bytes, and the guards around the output."""
    rng = random.Random(3)
    setup = [f"O {dtype} {one_bytes(dtype).hex()}" for dtype in SWEEP_DTYPES]
    setup += mask_lines(SWEEP_SIDE)
    lines = []
    small_lines = 0
    for n_rows in range(1, SWEEP_SIDE + 1):
        for n_cols in range(1, SWEEP_SIDE + 1):
            ks = list(range(-n_rows, n_cols + 1))
            small = small_widths(n_rows, n_cols, 3)
            for k in ks:
                cases = [("s", [k]), ("s", [k] * 3)]
                cases.append(("m", [rng.choice(ks), k, rng.choice(ks)]))
                for mode, case_ks in cases:
                    b = len(case_ks)
                    scalars = cupy_plan.vector_scalars(
                        n_rows, n_cols, b, k if mode == "s" else None, 32, 0
                    )
                    token = small if mode == "m" else ""
                    small_lines += bool(token)
                    lines.append(
                        f"W 32 {b} {n_rows} {n_cols} {k_text(mode, case_ks)} "
                        f"cycle={len(lines)} {token}{named(scalars)}"
                    )
    assert small_lines > 4000
    answers = run_shim_split(shim, setup, lines)
    bad = [
        f"{line[:80]}: {got}"
        for line, got in zip(lines, answers, strict=True)
        if got != "ok"
    ]
    assert len(lines) > 200_000
    assert not bad, f"{len(bad)} of {len(lines)} differ, e.g.\n" + "\n".join(bad[:5])


# Tiny matrices in batches whose chunks hold many whole matrices: 64 of the
# 1 x 1 ones in a chunk of uint8.
MANY_SHAPES = [(1, 1), (1, 2), (2, 1), (2, 3), (3, 2), (1, 3), (2, 2), (3, 3)]
MANY_SHAPES += [(1, 7), (5, 1), (4, 4), (3, 5), (7, 9)]


def last_chunk_full(n: int, head: int, chunk: int) -> bool:
    """Whether a launch's last thread writes a full chunk (the vector op, not
    the partial-chunk routine): then it reads kk's last element, next to the
    shim's inaccessible page."""
    last = (n + head - 1) // chunk * chunk
    return last >= head and last + chunk - head <= n


def test_vector_small_matrices_in_large_batches(shim: Path) -> None:
    """Per-matrix k over matrices of 1 to 63 elements in batches of 1 to 70
    (and a few up to 300): chunks that hold many whole matrices, each with
    its own k, at widths 1/2/4/8/16 bytes and every misaligned start. Every
    byte against NumPy, the guards around the output, and kk ends at an
    inaccessible page: a read of kk past its end (a matrix after the last)
    crashes the shim. Launches whose last chunk is full (so the vector op
    itself reads kk's last element) are counted, at every width."""
    rng = random.Random(17)
    setup = [f"O {dtype} {one_bytes(dtype).hex()}" for dtype in SWEEP_DTYPES]
    setup += mask_lines_for(MANY_SHAPES)
    lines = []
    edge_reads = dict.fromkeys(WIDTHS, 0)
    for n_rows, n_cols in MANY_SHAPES:
        mat = n_rows * n_cols
        ks = list(range(-n_rows, n_cols + 1))
        for b in [*range(1, 71), 100, 129, 200, 300]:
            small = small_widths(n_rows, n_cols, b)
            scalars = named(cupy_plan.vector_scalars(n_rows, n_cols, b, None, 32, 0))
            for cycle in range(16):  # every head at every width
                case_ks = [rng.choice(ks) for _ in range(b)]
                lines.append(
                    f"W 32 {b} {n_rows} {n_cols} {k_text('m', case_ks)} "
                    f"cycle={cycle} {small}{scalars}"
                )
                for width in WIDTHS:
                    head = cycle % (16 // width)
                    if mat * width < 64 and last_chunk_full(b * mat, head, 64 // width):
                        edge_reads[width] += 1
    assert all(count >= 20 for count in edge_reads.values()), edge_reads
    answers = run_shim_split(shim, setup, lines)
    bad = [
        f"{line[:80]}: {got}"
        for line, got in zip(lines, answers, strict=True)
        if got != "ok"
    ]
    assert not bad, f"{len(bad)} of {len(lines)} differ, e.g.\n" + "\n".join(bad[:5])


def test_shim_fence_catches_a_read_past_kk(shim: Path) -> None:
    """The fence the vector tests rely on is live: kk's last element reads
    fine, the one after it crashes the shim."""
    ok = subprocess.run([str(shim)], input="F 5 4\n", capture_output=True, text=True)
    assert (ok.returncode, ok.stdout) == (0, "0\n"), ok.stderr
    past = subprocess.run([str(shim)], input="F 5 5\n", capture_output=True, text=True)
    assert past.returncode == -11, (past.returncode, past.stderr)  # SIGSEGV


# Outputs past 2**31 elements, and where they take the 64-bit vector kernel
# (matrices of 2**31 elements or more) or 32-bit slices (smaller ones).
VECTOR_HUGE_SHAPES = [
    (2, 2**31, 1),
    (3, 2**31 + 11, 1),
    (2, 1, 2**31 + 5),
    (3, 46341, 46341),
    (2, 2**16, 2**16),
    (1, 3037000499, 3037000499),
    (5, 2**33 + 1, 2**27 - 1),
    (3, 2**61, 1),
    (1000003, 2**31 + 11, 4095),
    (2**40, 3, 5),
    (2**20, 64, 64),
    (3, 2**30, 1),
    (2**33, 1, 1),
    (7, 2**28 + 3, 3),
]


def chunk_samples(
    launch: cupy_plan.Launch, mat: int, chunk: int, rng: random.Random
) -> list[int]:
    """Thread indices of one launch: the ends, chunks at and around every
    matrix boundary the launch has near its ends and middle, random ones."""
    values = dict(launch.scalars)
    head, n = values["head"], values["n"]
    # The chunks that hold elements (the last warp's lanes past them, which
    # write nothing, are the V and W commands' part: the guards).
    threads = -(-(n + head) // chunk)
    assert launch.threads == whole_warps(threads)
    picks = {0, 1, threads - 2, threads - 1, threads // 2}
    mats = launch.stop - launch.start
    for b in {1, 2, mats // 2, mats - 1, rng.randrange(1, max(mats, 2))}:
        if 0 < b < mats:
            e = b * mat + head  # boundary, counted from the 16-byte boundary
            picks |= {e // chunk - 1, e // chunk, e // chunk + 1}
    picks |= {rng.randrange(threads) for _ in range(6)}
    return sorted(i for i in picks if 0 <= i < threads)


def whole_warps(chunks: int) -> int:
    """A vector launch's threads: one per chunk, rounded up to whole warps
    of 32 (every lane of a warp takes part in the warp's stores)."""
    return -(-chunks // 32) * 32


def test_vector_samples_beyond_int32(shim: Path) -> None:
    """Chunks of outputs up to 2**63 elements, through the header's per-thread
    functions with `plan`'s constants: the 64-bit kernel (matrices of 2**31+
    elements, chunks that cross matrices written element by element) and
    the 32-bit slices of larger outputs of smaller matrices (per-matrix k over
    matrices under 64 bytes: the small-matrix kernel). Every element
    of every sampled chunk is checked against exact integer arithmetic."""
    rng = random.Random(5)
    lines: list[str] = []
    # (shape of the launch, its per-matrix offsets or None, scalar k, chunks)
    checks: list[
        tuple[tuple[int, int, int], dict[int, int] | None, int | None, list[int]]
    ] = []
    small_seen = 0
    for shape in VECTOR_HUGE_SHAPES:
        b_count, n_rows, n_cols = shape
        mat = n_rows * n_cols
        assert b_count * mat >= 2**31
        for width in WIDTHS:
            dtype = BY_WIDTH[width]
            chunk = 64 // width
            for per_matrix in (False, True):
                ks = [*clamped_ks(n_rows, n_cols), rng.randint(-n_rows, n_cols)]
                k = None if per_matrix else rng.choice(ks)
                head = rng.randrange(16 // width)
                launches = cupy_plan.plan(
                    shape, k, width, contiguous=True, address=256 + head * width
                )
                picked = {0, len(launches) // 2, len(launches) - 1}
                for launch in (launches[j] for j in sorted(picked)):
                    assert launch.vector
                    assert launch.wide == (mat >= 2**31)
                    bits = 64 if launch.wide else 32
                    samples = chunk_samples(launch, mat, chunk, rng)
                    local_b = launch.stop - launch.start
                    kk: dict[int, int] = {}
                    if per_matrix:
                        head_l = dict(launch.scalars)["head"]
                        for i in samples:
                            lo = max(i * chunk - head_l, 0)
                            hi = min(i * chunk - head_l + chunk, local_b * mat)
                            for bb in range(lo // mat, (hi - 1) // mat + 1):
                                kk[bb] = rng.choice(ks)
                        pairs = " ".join(f"{bb} {kv}" for bb, kv in sorted(kk.items()))
                        k_part = f"m {len(kk)} {pairs}"
                    else:
                        k_part = f"s {k}"
                    small_seen += launch.small
                    lines.append(
                        f"X {dtype} {bits} {local_b} {n_rows} {n_cols} {k_part} "
                        f"{small_token(launch, width)}{named(launch.scalars)} ; "
                        + " ".join(map(str, samples))
                    )
                    offsets = kk if per_matrix else None
                    checks.append(((local_b, n_rows, n_cols), offsets, k, samples))
    assert small_seen >= 10  # per-matrix k over small matrices, sliced
    answers = run_shim(shim, lines)
    assert len(answers) == len(checks)
    for line, answer, (shape, kk, k, samples) in zip(
        lines, answers, checks, strict=True
    ):
        assert answer != "MISSING", line[:200]
        parts = answer.split()
        assert len(parts) == len(samples), line[:200]
        for part in parts:
            first_s, count_s, hexbits = part.split(":")
            first, count = int(first_s), int(count_s)
            assert count > 0
            got = int.from_bytes(bytes.fromhex(hexbits), "little")
            for d in range(count):
                i = first + d
                b, r = divmod(i, shape[1] * shape[2])
                row, col = divmod(r, shape[2])
                want = col - row == (k if kk is None else kk[b])
                assert ((got >> d) & 1) == want, (line[:160], first, d)


@pytest.mark.parametrize(
    "line",
    [
        # A 32-bit vector launch of 2**31 elements (plan slices those).
        "V uint8 32 1 65536 32768 s 0 threads=1 n=2147483648 head=0",
        # The 64-bit vector kernel for matrices under 2**31 elements.
        "V uint8 64 2 3 3 s 0 threads=1 n=18 head=0",
        # n that is not B*R*C.
        "V uint8 32 2 3 3 s 0 threads=1 n=17 head=0 mat_size=9",
        "V uint8 32 1 3 3 s 4 threads=1 n=9",  # k not clamped
        "W 32 1 3 3 s 0 cycle=0 n=9",  # no O and M lines given
    ],
)
def test_shim_rejects_vector_input_the_host_never_sends(shim: Path, line: str) -> None:
    proc = subprocess.run(
        [str(shim)], input="O uint8 01\n" + line + "\n", capture_output=True, text=True
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)


def test_shim_runs_whole_warps_only(shim: Path) -> None:
    """The warp-wide stores need every lane of a warp: a launch `plan`
    rounds to whole warps runs, and the same launch one thread short is
    refused (the shim's two-pass warp would otherwise be checked on lanes
    CuPy never runs)."""
    launch = vector_launch((3, 5, 7), 1, "float32", 0)
    assert launch.threads % 32 == 0
    line = f"V float32 32 3 5 7 s 1 threads={{}} {named(launch.scalars)}"
    ok = run_shim(shim, [line.format(launch.threads)])
    assert len(ok) == 1
    proc = subprocess.run(
        [str(shim)],
        input=line.format(launch.threads - 1) + "\n",
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "whole warps" in proc.stderr


def nvcc_arch(nvcc: str) -> str:
    """sm_90 when supported, else the newest architecture nvcc lists."""
    proc = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True)
    archs = sorted({int(a) for a in re.findall(r"compute_(\d+)", proc.stdout)})
    if not archs or 90 in archs:
        return "sm_90"
    return f"sm_{archs[-1]}"


@pytest.fixture(scope="module")
def ptx(tmp_path_factory: pytest.TempPathFactory, ops_header: Path) -> dict[str, str]:
    """ptx_check.cu compiled to PTX; maps each kernel name to its body."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not on PATH: device compile check of eye.cuh skipped")
    out = tmp_path_factory.mktemp("ptx") / "ptx_check.ptx"
    cmd = [nvcc, "--ptx", f"-arch={nvcc_arch(nvcc)}", "-std=c++17"]
    cmd += ["-include", str(ops_header), f"-I{HEADER.parent}"]
    cmd += [str(SHIM_DIR / "ptx_check.cu"), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "eye.cuh" not in proc.stderr, proc.stderr
    parts = re.split(r"(?m)^\.visible \.entry (\w+)\(", out.read_text())
    return dict(zip(parts[1::2], parts[2::2], strict=True))


KERNEL_KINDS = [
    "scalar",
    "per_matrix",
    "value",
    "vector",
    "vector_per_matrix",
    "vector_small",
]


def test_ptx_has_every_kernel(ptx: dict[str, str]) -> None:
    wanted = {
        f"eyelike_{kind}_{dtype}_i{bits}"
        for kind in KERNEL_KINDS
        for dtype in DTYPES
        for bits in (32, 64)
    }
    assert wanted <= set(ptx), sorted(wanted - set(ptx))


@pytest.mark.parametrize("kind", KERNEL_KINDS)
def test_ptx_int_index_avoids_64bit_division(ptx: dict[str, str], kind: str) -> None:
    """With I = int (U = unsigned int) the header and the operations divide
    in 32 bits only."""
    slow = [
        name
        for name, body in ptx.items()
        if name.startswith(f"eyelike_{kind}_")
        and name.endswith("_i32")
        and re.search(r"\b(?:div|rem)\.[su]64\b", body)
    ]
    assert not slow, slow
