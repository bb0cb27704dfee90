"""Where a small call's time goes, on torch and (with a GPU) CuPy: eyelike's
forms of a 3x3 eye beside the library's own, per call back to back (the
host clock, synchronised once per 2000 calls; the median of 7), then
cProfile of eyelike's forms; with a GPU, the CuPy kernel's two paths on one
3x3 output (launch and ``cupy.empty``: the vector launch's longer argument
list against the element launch's). Run, where eyelike and torch import:
``python scripts/small_calls.py cuda`` (or ``cpu``). Development tool: not
a benchmark (no rounds, no peers' checks); ``python -m benchmarks`` is."""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time
from typing import Any

import torch

import eyelike

dev_name = sys.argv[1] if len(sys.argv) > 1 else "cuda"
dev = torch.device(dev_name)
x = torch.empty((3, 3), device=dev)
sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)

forms = {
    "torch.eye(3, dtype=torch.float32, device=dev)": lambda: torch.eye(
        3, dtype=torch.float32, device=dev
    ),
    "torch.eye(3, device='<name>')": lambda: torch.eye(3, device=dev_name),
    "eye(3, dtype=torch.float32, device=dev)": lambda: eyelike.eye(
        3, dtype=torch.float32, xp=torch, device=dev
    ),
    "eye(3, dtype='float32', device='<name>')": lambda: eyelike.eye(
        3, dtype="float32", xp=torch, device=dev_name
    ),
    "eye(3, xp=torch, device='<name>')": lambda: eyelike.eye(
        3, xp=torch, device=dev_name
    ),
    "eye_like(x)": lambda: eyelike.eye_like(x),
    "eye(3, 4, k=1, device=dev)": lambda: eyelike.eye(
        3, 4, k=1, dtype=torch.float32, xp=torch, device=dev
    ),
    "torch.zeros(3, 3, device=dev)": lambda: torch.zeros(3, 3, device=dev),
}


def per_call(fn, n: int = 2000) -> float:
    fn()
    sync()
    best = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        best.append((time.perf_counter() - t0) / n * 1e6)
    best.sort()
    return best[len(best) // 2]


def profile(name: str, fn: Any, top: int) -> None:
    """cProfile of 3000 calls of ``fn``: the ``top`` entries by own time."""
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(3000):
        fn()
    sync()
    prof.disable()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(top)
    print(f"\n== profile: {name} (3000 calls)")
    print("\n".join(s.getvalue().splitlines()[: 2 * top + 12]))


print(f"torch {torch.__version__}, device {dev}")
for name, fn in forms.items():
    print(f"{per_call(fn):8.2f} us  {name}")

for name in [
    "eye(3, dtype=torch.float32, device=dev)",
    "eye(3, dtype='float32', device='<name>')",
    "eye_like(x)",
]:
    profile(name, forms[name], 14)

if dev.type == "cuda":
    import cupy

    cforms = {
        "cupy.eye(3, dtype=float32)": lambda: cupy.eye(3, dtype="float32"),
        "eye(3, dtype='float32', xp=cupy)": lambda: eyelike.eye(
            3, dtype="float32", xp=cupy
        ),
        "cupy.zeros((3, 3))": lambda: cupy.zeros((3, 3), dtype="float32"),
        "cupy.empty((3, 3))": lambda: cupy.empty((3, 3), dtype="float32"),
    }
    sync = cupy.cuda.runtime.deviceSynchronize
    print()
    for name, fn in cforms.items():
        print(f"{per_call(fn):8.2f} us  {name}")
    name = "eye(3, dtype='float32', xp=cupy)"
    profile(name, cforms[name], 25)

if dev.type == "cuda":
    # The CuPy kernel's two paths on one small output, host time included:
    # how much of a small call is the vector launch's argument list.
    from eyelike._backends.cupy import fill
    from eyelike._backends.cupy.planning import plan

    def launch(vector: bool) -> Any:
        # (vector_from=0: the vector path at any size; `eye` itself sends
        # a 3x3 to the element path.)
        a = cupy.empty((3, 3), dtype="float32")
        fill(a, 0, plan((3, 3), 0, 4, contiguous=vector, address=a.data.ptr,
                        vector_from=0))  # fmt: skip
        return a

    print()
    for name, vector in [("vector path", True), ("element path", False)]:
        print(f"{per_call(lambda v=vector: launch(v)):8.2f} us  3x3 {name}")
