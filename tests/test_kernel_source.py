"""CPU checks of the CUDA source used by the CuPy backend (kernels/eye.cuh).

No GPU is needed. tests/kernel_shim/host_shim.cpp compiles the real header
with g++ and runs the backend's operation strings in a CuPy-shaped loop; its
output is compared byte for byte with a NumPy reference built independently
from ``col - row == k``. When nvcc is available, tests/kernel_shim/ptx_check.cu
compiles the same header for the device the way CuPy lays a kernel out.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

# The CuPy backend's own ElementwiseKernel operation strings (importing the
# module does not import CuPy): both compiled programs run exactly these.
from eyelike._cupy import OP_PER_MATRIX, OP_SCALAR

REPO = Path(__file__).resolve().parents[1]
HEADER = REPO / "kernels" / "eye.cuh"
SHIM_DIR = Path(__file__).resolve().parent / "kernel_shim"


DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]

INT32_LIMIT = 2**31  # the host uses I = int iff B*R*C < 2**31
PTRDIFF_LIMIT = 2**63  # CuPy's loop index i is ptrdiff_t


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
        timeout=120,
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
    # Every function and macro it defines is namespaced by prefix.
    functions = re.findall(r"EYELIKE_DEVICE\s+inline\s+\w+\s+(\w+)\s*\(", text)
    macros = re.findall(r"#define\s+(\w+)", text)
    assert functions
    assert all(f.startswith("eyelike_") for f in functions)
    assert all(m.startswith("EYELIKE_") for m in macros)


def test_header_needs_no_other_header(tmp_path: Path) -> None:
    """Compile the header alone with no system headers and strict warnings:
    proves it relies on nothing NVRTC might lack."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not on PATH")
    builtin = ["bool", "signed char", "unsigned long long", "float", "double"]
    src = '#define EYELIKE_DEVICE\n#include "eye.cuh"\n' + "".join(
        f"template {t} eyelike_value<{t}, {i}>({i}, {i}, {i});\n"
        for t in builtin
        for i in ("int", "long long")
    )
    (tmp_path / "alone.cpp").write_text(src)
    cmd = [gxx, "-std=c++11", "-nostdinc", "-Wall", "-Wextra", "-Wconversion"]
    cmd += ["-Werror", f"-I{HEADER.parent}", "-c", "alone.cpp", "-o", "alone.o"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


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
                    expected.append(mask.astype(dtype).tobytes())
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
                    expected.append(values.astype(dtype).tobytes())
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


KERNEL_KINDS = ["scalar", "per_matrix", "value"]


def test_ptx_has_every_kernel(ptx: dict[str, str]) -> None:
    wanted = {
        f"eyelike_{kind}_{dtype}_i{bits}"
        for kind in KERNEL_KINDS
        for dtype in DTYPES
        for bits in (32, 64)
    }
    assert wanted <= set(ptx), sorted(wanted - set(ptx))


@pytest.mark.parametrize(
    "kind",
    [
        "scalar",
        "per_matrix",
        "value",
    ],
)
def test_ptx_int_index_avoids_64bit_division(ptx: dict[str, str], kind: str) -> None:
    """With I = int the header and the operation divide in 32 bits only."""
    slow = [
        name
        for name, body in ptx.items()
        if name.startswith(f"eyelike_{kind}_")
        and name.endswith("_i32")
        and re.search(r"\b(?:div|rem)\.[su]64\b", body)
    ]
    assert not slow, slow
