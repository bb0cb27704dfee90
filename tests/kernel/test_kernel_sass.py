"""The instruction budget of the CuPy vector kernel, from its disassembly.

An H200 issues about 33e12 thread-instructions per second (132 SMs x 4
schedulers x 32 lanes x ~1.98 GHz) and writes about 4.3 TB/s, so a kernel
that spends more than ~7.8 instructions per byte it writes is limited by
instruction issue, not memory. The budget here is half that: at most 4 SASS
instructions per byte, for every dtype, both index widths and both k modes
of the contiguous (vector) path.

Per-matrix k over matrices under one chunk has a kernel of its own whose
cost grows with the matrices a chunk touches (it reads each one's k): its
count is X + Y per matrix the chunk touches, at most 4 per byte for
matrices of 16 bytes or more, and for any size at most what the element
path (which served these outputs before) spends per byte.

Method: the cubin NVRTC builds from the very source CuPy generates
(test_kernel_nvrtc.py, kernel_build.py) is disassembled with nvdisasm; the
count is the longest path through the kernel's control flow from entry to
EXIT, with every loop run once (CuPy's grid-stride loop runs once per thread
here: a launch has a thread per chunk, whole warps) and every predicated
instruction counted as issued. The partial chunks' routine and the partial
warps' store routine (called, never inlined) are left out: the first and last
thread (warp) with elements run them, and in 64-bit launches the chunks (warps)
that cross a matrix boundary (once per 2**25 chunks at most). The count is
divided by the 64 bytes whose ones a thread finds and whose share of its
warp's stores (four 16-byte pieces) it writes.
"""

from __future__ import annotations

import concurrent.futures
import re

import pytest
from helpers import kernel_build as kb

from eyelike._backends.cupy import planning as cupy_plan

BUDGET = 4.0  # SASS instructions per byte written
# The vector path's kernels, and the element kernel per-matrix k over
# matrices under one chunk would take (its count per element, to compare).
VECTOR = [v for v in kb.variants() if v.layout.startswith("vector")]
ELEMENT = [kb.Variant(dtype, False, True, "contiguous") for dtype in kb.DTYPES]
SMALL_FROM = 16  # bytes per matrix from which the small kernel is in budget
# Instructions per byte of memory traffic above which an H200 would be
# limited by instruction issue rather than memory (33e12 / 4.3e12).
ISSUE_BOUND = 7.8


@pytest.fixture(scope="session")
def sass() -> dict[kb.Variant, str]:
    """Disassembly of every vector-path variant and of ELEMENT (nvdisasm runs
    in parallel)."""
    wanted = VECTOR + ELEMENT
    compiled = kb.compile_variants(wanted)
    kb.nvdisasm()
    failed = [v.id for v in wanted if compiled[v].status != 0]
    assert not failed, f"NVRTC failed: {failed} (see test_kernel_nvrtc.py)"
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        texts = list(pool.map(kb.disassemble, [compiled[v].cubin for v in wanted]))
    return dict(zip(wanted, texts, strict=True))


def kernel_code(
    variant: kb.Variant, text: str
) -> tuple[list[kb.Instr], dict[str, int]]:
    name = kb.generated_source(variant)[0]
    functions = kb.functions(text)
    assert name in functions, sorted(functions)
    return functions[name]


def per_byte(variant: kb.Variant, text: str) -> tuple[int, float]:
    count = kb.longest_path(*kernel_code(variant, text))
    return count, count / cupy_plan.CHUNK_BYTES


def matrices_touched(mat_size: int, chunk: int) -> int:
    """The most matrices of mat_size elements a chunk of `chunk` elements
    touches: starting at the last element of one, 2 + (chunk - 2) //
    mat_size."""
    return 2 + (chunk - 2) // mat_size


def small_cost(variant: kb.Variant, text: str) -> tuple[int, int]:
    """(X, Y): a chunk of the small-matrix kernel that touches m matrices
    costs at most X + Y m instructions. Y is its loop over the matrices
    after the first, one straight block (every iteration issues all of it);
    the longest path runs that loop once, so it is X + 2 Y."""
    instrs, labels = kernel_code(variant, text)
    loops = kb.back_edges(instrs, labels)
    # The matrices loop inside CuPy's grid-stride loop, and nothing else.
    assert len(loops) == 2, loops
    (first, last), (outer_first, outer_last) = loops
    assert outer_first < first <= last < outer_last
    body = instrs[first : last + 1]
    assert all(
        i.opcode.split(".")[0] not in ("BRA", "EXIT", "RET", "CALL") for i in body[:-1]
    ), [i.text for i in body]
    y = len(body)
    return kb.longest_path(instrs, labels) - 2 * y, y


def element_per_element(dtype: str, sass: dict[kb.Variant, str]) -> int:
    """The per-matrix element kernel's count on a contiguous output: what it
    spends per element (CuPy's loop runs once per element)."""
    variant = kb.Variant(dtype, False, True, "contiguous")
    return kb.longest_path(*kernel_code(variant, sass[variant]))


@pytest.mark.parametrize(
    "variant",
    [v for v in VECTOR if v.layout == "vector"],
    ids=lambda v: f"sass-{v.id}",
)
def test_sass_instructions_per_byte_within_budget(
    sass: dict[kb.Variant, str], variant: kb.Variant
) -> None:
    count, ratio = per_byte(variant, sass[variant])
    assert ratio <= BUDGET, f"{count} instructions per {cupy_plan.CHUNK_BYTES} bytes"


@pytest.mark.parametrize(
    "variant",
    [v for v in VECTOR if v.layout == "vector-small"],
    ids=lambda v: f"sass-{v.id}",
)
def test_sass_small_matrices_per_matrix_cost(
    sass: dict[kb.Variant, str], variant: kb.Variant
) -> None:
    """Per-matrix k over matrices under one chunk: X + Y per matrix the
    chunk touches. Within the budget of 4 per byte for every matrix of
    SMALL_FROM bytes or more (a chunk touches few of them), and for any
    size, 1 x 1 matrices included, at most what the element path spends
    per byte of the same output."""
    x, y = small_cost(variant, sass[variant])
    itemsize = kb.ITEMSIZE[variant.dtype]
    chunk = cupy_plan.CHUNK_BYTES // itemsize
    element = element_per_element(variant.dtype, sass)
    for mat_size in range(1, chunk):
        worst = x + y * matrices_touched(mat_size, chunk)
        if mat_size * itemsize >= SMALL_FROM:
            assert worst <= BUDGET * cupy_plan.CHUNK_BYTES, (mat_size, x, y)
        # Per byte: worst / 64 against element / itemsize.
        assert worst <= element * chunk, (mat_size, x, y, element)
        # Below SMALL_FROM the chunk also reads a k (4 bytes: 32-bit
        # launches only) per matrix it touches: per byte of that traffic
        # too, the kernel stays memory-bound, not issue-bound.
        traffic = cupy_plan.CHUNK_BYTES + 4 * matrices_touched(mat_size, chunk)
        assert worst <= ISSUE_BOUND * traffic, (mat_size, x, y)


@pytest.mark.parametrize("variant", VECTOR, ids=lambda v: f"sass-shape-{v.id}")
def test_sass_vector_kernel_stores_warp_runs_and_runs_edges_out_of_line(
    sass: dict[kb.Variant, str], variant: kb.Variant
) -> None:
    """What the count assumes: the kernel writes with 16-byte global stores
    only, at a lane's first piece and 512, 1024 and 1536 bytes past it (the
    warp's four runs of 512 contiguous bytes: whole lines per instruction;
    the compiler may repeat them in the shuffles' fallback for a diverged
    warp, which a converged warp never takes), calls the partial chunks'
    routine and the partial warps' one instead of inlining them, and has no
    local-memory traffic (the small-matrix kernel's loop included)."""
    name = kb.generated_source(variant)[0]
    functions = kb.functions(sass[variant])
    instrs = functions[name][0]
    stores = [i for i in instrs if i.opcode.startswith(("STG", "ST.", "STS"))]
    assert stores, [i.text for i in instrs]
    assert {i.opcode for i in stores} == {"STG.E.128"}, [i.text for i in stores]
    offsets = {
        int(m.group(1), 16) if m else 0
        for m in (_OFFSET.search(i.text) for i in stores)
    }
    assert offsets == {0, 0x200, 0x400, 0x600}, [i.text for i in stores]
    routines = [f for f in functions if f.startswith(f"${name}$")]
    for routine in ("eyelike_vector_edge", "eyelike_store_some"):
        assert any(routine in f for f in routines), sorted(functions)
    assert sum(i.opcode.startswith("CALL") for i in instrs) >= 2
    assert not any(i.opcode.startswith(("LDL", "STL")) for i in instrs)


_OFFSET = re.compile(r"\]\[R\d+\.64\+(0x[0-9a-f]+)\]")


def test_sass_table(sass: dict[kb.Variant, str]) -> None:
    """The README's table, printed with -s: instructions per byte written
    (instructions per 64-byte chunk). 32-bit launches serve every output
    whose matrices have fewer than 2**31 elements; 64-bit ones the rest."""
    rows: dict[str, dict[tuple[bool, bool], str]] = {}
    for variant, text in sass.items():
        if variant.layout != "vector":
            continue
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


def test_sass_table_small_matrices(sass: dict[kb.Variant, str]) -> None:
    """The README's table of the small-matrix kernel (per-matrix k over
    matrices under 64 bytes), printed with -s: instructions per chunk as X +
    Y per matrix the chunk touches; per byte for 1 x 1 matrices (a chunk
    touches one per element) and the element path's per byte, which these
    outputs took before; the smallest matrix, in bytes, from which every
    size is within 4 per byte ("any size" when a 1 x 1 matrix is); the most
    per byte of memory traffic (written, and 4 bytes of k read per matrix
    touched) at any size."""
    print(
        "\n| dtype | per chunk, m matrices touched | 1 x 1 matrices, per byte "
        "| within 4 per byte from | element path, per byte "
        "| most per byte of traffic |"
    )
    print("|---|---|---|---|---|---|")
    for dtype in kb.DTYPES:
        variant = kb.Variant(dtype, False, True, "vector-small")
        x, y = small_cost(variant, sass[variant])
        itemsize = kb.ITEMSIZE[dtype]
        chunk = cupy_plan.CHUNK_BYTES // itemsize
        worst = {m: x + y * matrices_touched(m, chunk) for m in range(1, chunk)}
        within = min(
            m
            for m in worst
            if all(worst[n] <= BUDGET * cupy_plan.CHUNK_BYTES for n in worst if n >= m)
        )
        element = element_per_element(dtype, sass) / itemsize
        traffic = max(
            worst[m] / (cupy_plan.CHUNK_BYTES + 4 * matrices_touched(m, chunk))
            for m in worst
        )
        print(
            f"| {dtype} | {x} + {y} m | {worst[1] / cupy_plan.CHUNK_BYTES:.1f} "
            f"| {f'{within * itemsize} B' if within > 1 else 'any size'} "
            f"| {element:.1f} | {traffic:.2f} |"
        )


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
