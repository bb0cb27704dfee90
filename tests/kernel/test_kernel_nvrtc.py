"""eyelike's CuPy kernels compile, exactly as CuPy compiles them, on the CPU.

For every dtype CuPy supports (bfloat16 included), both index widths, both
k modes and each layout class the host sends a kernel (the vector path, and
its kernel for per-matrix k over matrices under one chunk, 32-bit only; the
element path on a contiguous output under 256 KiB, 32-bit only, and on a
strided 2-D and a transposed 3-D one),
kernel_build.py generates the very source CuPy 14.2 would hand NVRTC for
eyelike's ``ElementwiseKernel`` objects, from the launches `cupy_plan.plan`
makes, and NVRTC 12 compiles it for sm_90 with CuPy's options. Any error or
warning fails. No GPU is needed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import kernel_build as kb

from eyelike._backends.cupy import planning as cupy_plan

VARIANTS = kb.variants()


@pytest.fixture(scope="session")
def compiled() -> dict[kb.Variant, kb.Compiled]:
    return kb.compile_variants(VARIANTS)


def test_nvrtc_is_the_cuda_12_compiler_cupy_cuda12x_uses() -> None:
    kb.cupy_or_skip()
    major, minor = kb.nvrtc_version()
    assert major == 12, f"NVRTC {major}.{minor}: cupy-cuda12x compiles with 12.x"


def test_nvrtc_variants_cover_every_dtype_width_mode_and_layout() -> None:
    assert {v.dtype for v in VARIANTS} == set(kb.DTYPES)
    assert len(kb.DTYPES) == 15
    for dtype in kb.DTYPES:
        mine = [v for v in VARIANTS if v.dtype == dtype]
        assert {(v.wide, v.per_matrix) for v in mine} == {
            (w, p) for w in (False, True) for p in (False, True)
        }
        assert {v.layout for v in mine} == set(kb.LAYOUTS)
        small = {(v.wide, v.per_matrix) for v in mine if v.layout == "vector-small"}
        assert small == {(False, True)}
        # A contiguous output takes the element path only under 256 KiB.
        element = {(v.wide, v.per_matrix) for v in mine if v.layout == "contiguous"}
        assert element == {(False, False), (False, True)}


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: f"nvrtc-{v.id}")
def test_nvrtc_compiles_cupy_generated_source_cleanly(
    compiled: dict[kb.Variant, kb.Compiled], variant: kb.Variant
) -> None:
    result = compiled[variant]
    assert result.status == 0, result.log[-4000:]
    assert result.log == "", f"NVRTC said something:\n{result.log[-4000:]}"
    assert result.cubin.startswith(b"\x7fELF")


@pytest.mark.parametrize(
    "variant",
    [v for v in VARIANTS if v.dtype in ("uint8", "bfloat16", "complex128")],
    ids=lambda v: f"nvrtc-source-{v.id}",
)
def test_nvrtc_source_is_what_cupy_launches(variant: kb.Variant) -> None:
    """The generated source has CuPy's shape: its headers, T from the output
    dtype before eyelike's header (the preamble), eyelike's operation inside
    CUPY_FOR, and the output as CuPy passes it (a raw 1-D array with our
    own indexing on the vector path, an indexed CArray of the layout's ndim
    otherwise)."""
    name, source = kb.generated_source(variant)
    launch = kb.launch_for(variant)
    assert source.startswith("#include <cupy/complex.cuh>\n#include <cupy/carray.cuh>")
    typedef = source.index("typedef ")
    assert source.index("EYELIKE_EYE_CUH_") > typedef
    assert "CUPY_FOR(i, _ind.size())" in source
    ctype = "long long" if variant.wide else "int"
    assert f"typedef {ctype} I;\ntypedef unsigned {ctype} U;" in source
    ndim, contiguous = kb.LAYOUTS[variant.layout]
    flags = f"{ndim}, {int(contiguous)}, {int(variant.array_32)}"
    if launch.vector:
        op = cupy_plan.VECTOR_OPS[launch.kind]
        assert re.search(rf"CArray<\w[\w:<> ]*, {flags}> out\b", source)
        assert "_raw_out" not in source
    else:
        op = cupy_plan.OP_PER_MATRIX if variant.per_matrix else cupy_plan.OP_SCALAR
        assert re.search(rf"CArray<\w[\w:<> ]*, {flags}> _raw_out\b", source)
        assert "T &out = _raw_out[_ind.get()];" in source
    assert op in source
    assert f'extern "C" __global__ void {name}(' in source
    if variant.dtype == "bfloat16":
        assert '#include "cupy/bfloat16.cuh"' in source
        assert "typedef bfloat16 T;" in source


def test_nvrtc_reports_errors_and_warnings() -> None:
    """The check above would see a failure: NVRTC's status for an error, its
    log for a warning (an unused variable), with the same options."""
    kb.cupy_or_skip()
    bad = kb.compile_source('extern "C" __global__ void k() { int x = ; }')
    assert bad.status != 0
    assert "error" in bad.log
    warned = kb.compile_source('extern "C" __global__ void k() { int unused; }')
    assert warned.status == 0
    assert "warning" in warned.log


def test_the_docs_count_of_variants_is_this_one() -> None:
    """The figure the documentation states is counted, not typed."""
    page = Path(__file__).resolve().parents[2] / "docs" / "guide" / "backends.md"
    (stated,) = re.findall(r"\((\d+) variants", page.read_text(encoding="utf-8"))
    assert int(stated) == len(VARIANTS)
