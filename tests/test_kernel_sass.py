"""The instruction budget of the CuPy vector kernel, from its disassembly.

An H200 issues about 33e12 thread-instructions per second (132 SMs x 4
schedulers x 32 lanes x ~1.98 GHz) and writes about 4.3 TB/s, so a kernel
that spends more than ~7.8 instructions per byte it writes is limited by
instruction issue, not memory. The budget here is half that: at most 4 SASS
instructions per byte, for every dtype, both index widths and both k modes
of the contiguous (vector) path.

Method: the cubin NVRTC builds from the very source CuPy generates
(test_kernel_nvrtc.py, kernel_build.py) is disassembled with nvdisasm; the
count is the longest path through the kernel's control flow from entry to
EXIT, with every loop run once (CuPy's grid-stride loop runs once per thread
here: a launch has as many threads as chunks) and every predicated
instruction counted as issued. The partial chunks' routine (called, never
inlined) is left out: the first and last thread of a launch run it, and in
64-bit launches the chunks that cross a matrix boundary (once per 2**25
chunks at most). The count is divided by the 64 bytes a thread writes.
"""

from __future__ import annotations

import concurrent.futures

import kernel_build as kb
import pytest

from eyelike import _cupy

BUDGET = 4.0  # SASS instructions per byte written
VECTOR = [v for v in kb.variants() if v.layout == "vector"]


@pytest.fixture(scope="session")
def sass() -> dict[kb.Variant, str]:
    """Disassembly of every vector-path variant (nvdisasm runs in parallel)."""
    compiled = kb.compile_variants(VECTOR)
    kb.nvdisasm()
    failed = [v.id for v in VECTOR if compiled[v].status != 0]
    assert not failed, f"NVRTC failed: {failed} (see test_kernel_nvrtc.py)"
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        texts = list(pool.map(kb.disassemble, [compiled[v].cubin for v in VECTOR]))
    return dict(zip(VECTOR, texts, strict=True))


def per_byte(variant: kb.Variant, text: str) -> tuple[int, float]:
    name = kb.generated_source(variant)[0]
    functions = kb.functions(text)
    assert name in functions, sorted(functions)
    instrs, labels = functions[name]
    count = kb.longest_path(instrs, labels)
    return count, count / _cupy.CHUNK_BYTES


@pytest.mark.parametrize("variant", VECTOR, ids=lambda v: f"sass-{v.id}")
def test_sass_instructions_per_byte_within_budget(
    sass: dict[kb.Variant, str], variant: kb.Variant
) -> None:
    count, ratio = per_byte(variant, sass[variant])
    assert ratio <= BUDGET, f"{count} instructions per {_cupy.CHUNK_BYTES} bytes"


@pytest.mark.parametrize("variant", VECTOR, ids=lambda v: f"sass-shape-{v.id}")
def test_sass_vector_kernel_stores_16_bytes_and_runs_edges_out_of_line(
    sass: dict[kb.Variant, str], variant: kb.Variant
) -> None:
    """What the count assumes: the kernel writes with 16-byte global stores
    only, four per chunk (the compiler may keep two copies of the loop, one
    per uniform branch), calls the partial chunks' routine instead of
    inlining it, and has no local-memory traffic."""
    name = kb.generated_source(variant)[0]
    functions = kb.functions(sass[variant])
    ops = [i.opcode for i in functions[name][0]]
    stores = [op for op in ops if op.startswith(("STG", "ST.", "STS"))]
    assert stores, ops
    assert set(stores) == {"STG.E.128"}, stores
    assert len(stores) % 4 == 0
    routines = [f for f in functions if f.startswith(f"${name}$")]
    assert any("eyelike_vector_edge" in f for f in routines), sorted(functions)
    assert sum(op.startswith("CALL") for op in ops) >= 1
    assert not any(op.startswith(("LDL", "STL")) for op in ops)


def test_sass_table(sass: dict[kb.Variant, str]) -> None:
    """The README's table, printed with -s: instructions per byte written
    (instructions per 64-byte chunk). 32-bit launches serve every output
    whose matrices have fewer than 2**31 elements; 64-bit ones the rest."""
    rows: dict[str, dict[tuple[bool, bool], str]] = {}
    for variant, text in sass.items():
        if not variant.array_32 and not variant.wide:
            continue  # the same code as the 2 GiB-or-less 32-bit variant
        count, ratio = per_byte(variant, text)
        cell = f"{ratio:.2f} ({count})"
        rows.setdefault(variant.dtype, {})[(variant.wide, variant.per_matrix)] = cell
    columns = ["scalar k", "per-matrix k", "scalar k, 64-bit", "per-matrix k, 64-bit"]
    print("\n| dtype | " + " | ".join(columns) + " |")
    print("|---|---|---|---|---|")
    for dtype in kb.DTYPES:
        r = rows[dtype]
        cells = [r[(False, False)], r[(False, True)], r[(True, False)], r[(True, True)]]
        print(f"| {dtype} | " + " | ".join(cells) + " |")
    assert len(rows) == len(kb.DTYPES)


def test_sass_longest_path_counts_what_a_thread_runs() -> None:
    """The path counter on hand-written SASS: a branch takes the longer arm,
    predicated instructions count, a loop body counts once, a called routine
    (after the kernel's code, under its own label) does not count."""
    text = """
        .section        .text.k,"ax",@progbits
k:
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   ISETP.GE.AND P0, PT, R0, 0x10, PT ;
        /*0020*/               @P0 EXIT ;
.L_x_0:
        /*0030*/                   IADD3 R0, R0, 0x1, RZ ;
        /*0040*/               @P1 BRA `(.L_x_1) ;
        /*0050*/                   IADD3 R1, R1, 0x1, RZ ;
        /*0060*/                   IADD3 R1, R1, 0x1, RZ ;
        /*0070*/                   IADD3 R1, R1, 0x1, RZ ;
        /*0080*/                   BRA `(.L_x_2) ;
.L_x_1:
        /*0090*/               @P2 IADD3 R2, R2, 0x1, RZ ;
        /*00a0*/                   CALL.REL.NOINC `($k$sub) ;
.L_x_2:
        /*00b0*/               @!P0 BRA `(.L_x_0) ;
        /*00c0*/                   EXIT ;
$k$sub:
        /*00d0*/                   IADD3 R3, R3, 0x1, RZ ;
        /*00e0*/                   IADD3 R3, R3, 0x1, RZ ;
        /*00f0*/                   RET.REL.NODEC R20 `(k) ;
.L_x_3:
        /*0100*/                   BRA `(.L_x_3);
"""
    functions = kb.functions(text)
    assert len(functions["$k$sub"][0]) == 4  # the routine, on its own
    instrs, labels = functions["k"]
    # Entry 3, loop head 2, longer arm 4 (3 + BRA), latch 1, EXIT 1.
    assert kb.longest_path(instrs, labels) == 3 + 2 + 4 + 1 + 1
