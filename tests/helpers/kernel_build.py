"""Build eyelike's CuPy kernels on the CPU exactly as CuPy 14.2 does.

Helpers for test_kernel_nvrtc.py and test_kernel_sass.py (no GPU needed):

* the source: CuPy's own code generation
  (``cupy._core._kernel._get_elementwise_kernel_code``) for the very
  ``ElementwiseKernel`` objects eyelike launches (``cupy_backend.kernel``), with
  the argument descriptions (``_ArgInfo``) and type map (``_TypeMap``) that
  CuPy derives at launch from the arguments `cupy_plan.plan` chooses, prefixed
  with the headers of ``cupy._core.core._cupy_header_list`` as
  ``compile_with_cache`` does;
* the options: ``assemble_cupy_compiler_options(())`` plus the three CuPy's
  NVRTC path appends (``-ftz=true``, ``-arch=sm_90``,
  ``--device-as-default-execution-space``);
* the compiler: NVRTC from the ``nvidia-cuda-nvrtc-cu12`` wheel, through
  ctypes (which releases the GIL, so a thread pool compiles in parallel);
* the disassembler: ``nvdisasm`` from the ``nvidia-cuda-nvdisasm`` wheel.

These are CuPy's private APIs: everything here targets CuPy 14.2 and the
tests skip, saying so, on any other version.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import dataclasses
import functools
import importlib.util
import multiprocessing
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eyelike._backends import cupy as cupy_backend
from eyelike._backends.cupy import planning as cupy_plan
from eyelike._validate.dtypes import ITEMSIZE  # bytes per element, by name

from . import CUPY_DTYPES

PINNED_CUPY = "14.2"  # the CuPy whose private code generation is used here
ARCH = "sm_90"  # H200 (Hopper)

DTYPES = CUPY_DTYPES  # every dtype the kernels are built for

# Layout classes of the output, as CuPy sees it after `_reduce_dims`:
# (ndim of the CArray and indexer, c_contiguous). "vector" is the fast path
# (a raw 1-D output), "vector-small" its kernel for per-matrix k over
# matrices under one chunk (32-bit launches only: matrices that small never
# need 64-bit indices); the others take the element kernel: every other row
# of a batch reduces to 2-D, a transposed batch stays 3-D. "contiguous" is
# the element kernel on a 1-D C-contiguous output: every such output under
# VECTOR_FROM_BYTES (32-bit only: that is far under 2**31 elements), and the
# SASS tests' reference for what the element path costs per element.
LAYOUTS = {
    "vector": (1, True),
    "vector-small": (1, True),
    "contiguous": (1, True),
    "strided-2d": (2, False),
    "transposed-3d": (3, False),
}

# CuPy's _ArgKind enum (cupy/_core/_kernel.pxd), not exported to Python.
_NDARRAY, _INDEXER, _SCALAR = 1, 2, 3


def numpy_dtype(name: str) -> np.dtype[Any]:
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def cupy_or_skip() -> Any:
    """CuPy, when it is the pinned version; a skip saying why otherwise."""
    try:
        import cupy
    except Exception as exc:  # not installed, or broken
        pytest.skip(f"CuPy {PINNED_CUPY} is needed to generate the source: {exc}")
    if not cupy.__version__.startswith(PINNED_CUPY + "."):
        pytest.skip(
            f"these tests drive CuPy {PINNED_CUPY}'s private code generation; "
            f"this is CuPy {cupy.__version__}"
        )
    return cupy


@dataclasses.dataclass(frozen=True)
class Variant:
    """One kernel binary: output dtype, index width, k mode, layout class."""

    dtype: str
    wide: bool
    per_matrix: bool
    layout: str
    # CuPy's index_32_bits of the output array (bytes <= 2**31) and of the
    # indexer (loop size <= 2**31); they pick CArray/CIndexer variants.
    array_32: bool = True
    indexer_32: bool = True

    @property
    def id(self) -> str:
        width = "i64" if self.wide else "i32"
        mode = "batched_k" if self.per_matrix else "scalar_k"
        extra = "" if self.array_32 else "-big"
        return f"{self.dtype}-{width}-{mode}-{self.layout}{extra}"


def _occurs(wide: bool, per_matrix: bool, layout: str) -> bool:
    """Whether eyelike ever launches this combination: the element kernel on
    a contiguous output, and the small-matrix vector kernel for per-matrix k,
    in 32-bit launches only."""
    if layout in ("vector-small", "contiguous"):
        return (per_matrix or layout == "contiguous") and not wide
    return True


def variants() -> list[Variant]:
    """Every dtype x index width x k mode x layout that eyelike launches,
    with CuPy's index flags as a real output of that kind has them (a wide
    output is over 2 GiB; a narrow one can be too, with wide elements)."""
    out = []
    for dtype in DTYPES:
        for wide in (False, True):
            for per_matrix in (False, True):
                for layout in LAYOUTS:
                    if not _occurs(wide, per_matrix, layout):
                        continue
                    if wide:
                        # Over 2**31 elements: the element kernel's loop
                        # index too; the vector kernel has 1/N the threads.
                        flags = [(False, layout == "vector")]
                    else:
                        flags = [(True, True)]
                        if layout in ("vector", "vector-small", "transposed-3d"):
                            flags.append((False, True))  # > 2 GiB of bytes
                    out += [
                        Variant(dtype, wide, per_matrix, layout, a32, i32)
                        for a32, i32 in flags
                    ]
    return out


def launch_for(variant: Variant) -> cupy_plan.Launch:
    """A launch `cupy_plan.plan` makes for an output of this variant's kind."""
    itemsize = ITEMSIZE[variant.dtype]
    k = None if variant.per_matrix else 1
    # Wide: the element kernel for any output of 2**31+ elements, the vector
    # kernel for matrices of 2**31+ elements.
    shape: tuple[int, ...] = (2, 2**15, 2**16) if variant.wide else (6, 40, 40)
    address = 256  # cupy.empty: 256-byte aligned at least
    contiguous = variant.layout in ("vector", "vector-small", "contiguous")
    # The vector layouts at any size; the contiguous one by `plan`'s own
    # threshold, which (6, 40, 40) is under at every width.
    vector_from = cupy_plan.VECTOR_FROM_BYTES if variant.layout == "contiguous" else 0
    if variant.layout == "vector-small":  # matrices under one chunk
        shape = (6, 1, 1)
    (got,) = cupy_plan.plan(
        shape, k, itemsize, contiguous=contiguous, address=address,
        vector_from=vector_from,
    )  # fmt: skip
    assert got.vector == variant.layout.startswith("vector"), (variant, got)
    assert got.small == (variant.layout == "vector-small"), (variant, got)
    assert got.wide == variant.wide, (variant, got)
    assert got.per_matrix == variant.per_matrix, (variant, got)
    return got


@functools.cache
def generated_source(variant: Variant) -> tuple[str, str]:
    """(kernel name, the complete source CuPy hands NVRTC) for a variant."""
    cupy = cupy_or_skip()
    from cupy._core import _carray, _kernel, _scalar, core

    launch = launch_for(variant)
    kernel = cupy_backend.kernel(
        variant.per_matrix, variant.wide, launch.vector, launch.small
    )
    dtype = numpy_dtype(variant.dtype)
    ndim, c_contiguous = LAYOUTS[variant.layout]
    index = np.dtype(np.int64 if variant.wide else np.int32)

    # What CuPy's ElementwiseKernel.__call__ derives from the arguments.
    infos = [
        _kernel._ArgInfo(_SCALAR, _scalar.CScalar, np.dtype(type(a)), 0, True, True)
        for a in cupy_plan.arguments(launch)
    ]
    in_dtypes: list[Any] = [None] * len(infos)
    if variant.per_matrix:  # the raw kk array: 1-D, contiguous, small
        infos.append(_kernel._ArgInfo(_NDARRAY, cupy.ndarray, index, 1, True, True))
        in_dtypes.append(index)
    infos.append(
        _kernel._ArgInfo(
            _NDARRAY, cupy.ndarray, dtype, ndim, c_contiguous, variant.array_32
        )
    )
    infos.append(
        _kernel._ArgInfo(
            _INDEXER, _carray.Indexer, None, ndim, True, variant.indexer_32
        )
    )
    _, _, type_map = _kernel._decide_params_type(
        kernel.in_params, kernel.out_params, tuple(in_dtypes), (dtype,)
    )
    code = _kernel._get_elementwise_kernel_code(
        tuple(infos),
        type_map,
        kernel.params,
        kernel.operation,
        kernel.name,
        kernel.preamble,
        **kernel.kwargs,
    )
    # compile_with_cache prepends CuPy's headers.
    headers = "".join(f"#include <{h}>\n" for h in core._cupy_header_list)
    return kernel.name, headers + code


@functools.lru_cache(maxsize=1)
def nvrtc_options() -> tuple[str, ...]:
    cupy_or_skip()
    from cupy._core import core

    return (
        *core.assemble_cupy_compiler_options(()),
        "-ftz=true",
        f"-arch={ARCH}",
        "--device-as-default-execution-space",
    )


def _nvidia_file(package: str, *parts: str) -> Path | None:
    """A file inside one of NVIDIA's pip wheels (the ``nvidia`` namespace)."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = Path(root, package, *parts)
        if path.exists():
            return path
    return None


@functools.lru_cache(maxsize=1)
def nvrtc() -> ctypes.CDLL:
    """libnvrtc 12 from the ``nvidia-cuda-nvrtc-cu12`` wheel, or a skip."""
    path = _nvidia_file("cuda_nvrtc", "lib", "libnvrtc.so.12")
    if path is None:
        pytest.skip("NVRTC 12 is needed: pip install nvidia-cuda-nvrtc-cu12")
    lib = ctypes.CDLL(str(path))
    lib.nvrtcCreateProgram.argtypes = [
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    lib.nvrtcCompileProgram.argtypes = [
        ctypes.c_void_p,
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_char_p),
    ]
    for name in ("nvrtcGetProgramLogSize", "nvrtcGetCUBINSize"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    for name in ("nvrtcGetProgramLog", "nvrtcGetCUBIN"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.nvrtcDestroyProgram.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    return lib


def nvrtc_version() -> tuple[int, int]:
    lib = nvrtc()
    major, minor = ctypes.c_int(), ctypes.c_int()
    assert lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) == 0
    return major.value, minor.value


@dataclasses.dataclass(frozen=True)
class Compiled:
    status: int  # nvrtcResult: 0 is success
    log: str
    cubin: bytes


def compile_source(source: str, options: tuple[str, ...] | None = None) -> Compiled:
    """One NVRTC compilation with CuPy's options (``options``: passed in by
    worker processes, which need not import CuPy)."""
    if options is None:
        options = nvrtc_options()
    lib = nvrtc()
    prog = ctypes.c_void_p()
    status = lib.nvrtcCreateProgram(
        ctypes.byref(prog), source.encode(), b"kern.cu", 0, None, None
    )
    assert status == 0, f"nvrtcCreateProgram failed: {status}"
    try:
        opts = [o.encode() for o in options]
        status = lib.nvrtcCompileProgram(
            prog, len(opts), (ctypes.c_char_p * len(opts))(*opts)
        )
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        cubin = b""
        if status == 0:
            lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
            buf = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetCUBIN(prog, buf)
            cubin = buf.raw
        return Compiled(status, log.value.decode(errors="replace").strip(), cubin)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


@functools.lru_cache(maxsize=1)
def nvdisasm() -> str:
    """nvdisasm from the ``nvidia-cuda-nvdisasm`` wheel (or PATH), or a skip."""
    for candidate in (
        _nvidia_file("cu13", "bin", "nvdisasm"),
        Path(sys.prefix, "bin", "nvdisasm"),
    ):
        if candidate is not None and candidate.is_file():
            return str(candidate)
    found = shutil.which("nvdisasm")
    if found is None:
        pytest.skip("nvdisasm is needed: pip install nvidia-cuda-nvdisasm")
    return found


def disassemble(cubin: bytes) -> str:
    """SASS text of a cubin (code sections only)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "kern.cubin")
        path.write_bytes(cubin)
        # -ndf: no dataflow analysis (nvdisasm 13 cannot run it on a 12.x
        # cubin and says so); the instruction stream is the same.
        proc = subprocess.run(
            [nvdisasm(), "-c", "-ndf", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# ------------------------------------------------------ static SASS analysis

_INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*$")
_LABEL = re.compile(r"^\s*(\.L_x_\d+|[A-Za-z_][\w.$]*):\s*$")
_TARGET = re.compile(r"`\((\.L_x_\d+|[\w.$]+)\)")


@dataclasses.dataclass(frozen=True)
class Instr:
    offset: int
    text: str

    @property
    def guard(self) -> str | None:
        m = re.match(r"@(!?U?P\w+)\s", self.text)
        return m.group(1) if m else None

    @property
    def opcode(self) -> str:
        body = re.sub(r"^@!?U?P\w+\s+", "", self.text)
        return body.split()[0] if body else ""

    @property
    def target(self) -> str | None:
        m = _TARGET.search(self.text)
        return m.group(1) if m else None


def functions(sass: str) -> dict[str, tuple[list[Instr], dict[str, int]]]:
    """Each function's instructions and its labels (name -> instruction
    index), from nvdisasm's text: kernels by name, called routines by their
    ``$kernel$mangled`` label."""
    out: dict[str, tuple[list[Instr], dict[str, int]]] = {}
    current: str | None = None
    for line in sass.splitlines():
        m = re.match(r"^\s*\.section\s+\.text\.([\w$.]+),", line)
        if m:
            current = m.group(1)
            out[current] = ([], {})
            continue
        if current is None:
            continue
        # A called routine (nvdisasm labels it $kernel$mangled_name) ends
        # the kernel's code: it becomes a function of its own.
        m = re.match(r"^(\$[\w$.]+):\s*$", line)
        if m:
            current = m.group(1)
            out[current] = ([], {})
            continue
        instrs, labels = out[current]
        m = _LABEL.match(line)
        if m:
            labels[m.group(1)] = len(instrs)
            continue
        m = _INSTR.match(line)
        if m:
            instrs.append(Instr(int(m.group(1), 16), m.group(2).rstrip(" ;")))
    return out


def longest_path(instrs: list[Instr], labels: dict[str, int]) -> int:
    """Instructions on the longest path from entry to an EXIT or RET that
    runs every loop at most once (back edges removed); CALLs count as one
    instruction (the callee is not entered).

    A predicated instruction is issued whether or not its guard holds, so it
    counts. An unconditional BRA ends its block; a predicated one (and a
    predicated EXIT/RET) falls through as well.
    """
    n = len(instrs)
    succ: list[list[int]] = [[] for _ in range(n)]
    for j, ins in enumerate(instrs):
        op = ins.opcode.split(".")[0]
        conditional = ins.guard is not None and ins.guard not in ("PT",)
        if op in ("EXIT", "RET"):
            if conditional and j + 1 < n:
                succ[j].append(j + 1)
            continue
        if op in ("BRA", "BRX", "JMP"):
            target = ins.target
            if target is not None and target in labels:
                succ[j].append(labels[target])
            if conditional and j + 1 < n:
                succ[j].append(j + 1)
            continue
        if j + 1 < n:
            succ[j].append(j + 1)
    # Depth-first order from the entry; edges to a node on the stack are
    # back edges (loops), dropped.
    order: list[int] = []
    state = [0] * n  # 0 new, 1 on stack, 2 done
    dag: list[list[int]] = [[] for _ in range(n)]
    stack: list[tuple[int, int]] = [(0, 0)]
    state[0] = 1
    while stack:
        node, k = stack[-1]
        if k < len(succ[node]):
            stack[-1] = (node, k + 1)
            nxt = succ[node][k]
            if state[nxt] == 1:
                continue  # back edge
            dag[node].append(nxt)
            if state[nxt] == 0:
                state[nxt] = 1
                stack.append((nxt, 0))
        else:
            state[node] = 2
            order.append(node)
            stack.pop()
    # `order` is a post-order: successors before predecessors.
    best = [0] * n
    for node in order:
        op = instrs[node].opcode.split(".")[0]
        tail = max((best[s] for s in dag[node]), default=0)
        if not dag[node] and op not in ("EXIT", "RET"):
            tail = 0
        best[node] = 1 + tail
    return best[0]


def back_edges(instrs: list[Instr], labels: dict[str, int]) -> list[tuple[int, int]]:
    """The loops of a function: (first, last) instruction indices of each
    branch back to a label at or before it, innermost (shortest) first."""
    edges = [
        (labels[ins.target], j)
        for j, ins in enumerate(instrs)
        if ins.opcode.split(".")[0] == "BRA"
        and ins.target in labels
        and labels[ins.target] <= j
    ]
    return sorted(edges, key=lambda edge: edge[1] - edge[0])


_COMPILED: dict[Variant, Compiled] = {}


def compile_variants(wanted: list[Variant]) -> dict[Variant, Compiled]:
    """The variants compiled, each once per test session, in two worker
    processes (CI has two cores; NVRTC runs one compilation at a time per
    process)."""
    cupy_or_skip()
    nvrtc()
    missing = [v for v in wanted if v not in _COMPILED]
    if missing:
        sources = [generated_source(v)[1] for v in missing]
        options = [nvrtc_options()] * len(sources)
        # spawn, not fork: the test process has threads (fork would warn).
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
            results = pool.map(compile_source, sources, options, chunksize=4)
            _COMPILED.update(zip(missing, results, strict=True))
    return {v: _COMPILED[v] for v in wanted}
