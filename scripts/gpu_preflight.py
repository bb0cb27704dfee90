"""Helpers of scripts/gpu-check.sh, the prepared GPU run.

``python3 scripts/gpu_preflight.py probe``
    Exit 0 only if CuPy sees a CUDA device and a CuPy kernel, and eyelike's
    own kernel, compile and run right there; else print why and exit 1, so
    that a run on a machine without a GPU stops before any test instead of
    passing by skipping them. Also prints the versions of everything the
    tests and the benchmark use, whether torch and JAX see the GPU, and any
    warning met on the way, since pytest's ``filterwarnings = ["error"]``
    turns a warning at ``import cupy`` into a failed device probe.

``python3 scripts/gpu_preflight.py missing-wheels DIR``
    Print the wheels in DIR whose distribution is not installed, one per
    line: only those are installed, so a carried wheel never shadows the
    machine's own copy of a package.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
import warnings
from pathlib import Path
from typing import Any

# The GPU tests import these; without them their modules skip whole.
REQUIRED = ["pytest", "hypothesis", "array_api_compat", "dask.array"]
# The benchmark's peers on the same GPU (without them it runs CuPy alone),
# its SM clock reader, and bfloat16 (without ml_dtypes that case is skipped).
OPTIONAL = ["torch", "jax", "pynvml", "ml_dtypes"]


def _fail(why: str) -> int:
    print(f"PREFLIGHT FAILED: {why}", flush=True)
    return 1


def _version(module: str) -> str:
    """The version of ``module``'s package once ``module`` imports, or why not."""
    try:
        importlib.import_module(module)
    except Exception as exc:  # reported, not raised: the caller decides
        return f"MISSING ({type(exc).__name__}: {exc})"
    package = sys.modules[module.split(".")[0]]
    return str(getattr(package, "__version__", "present"))


def _kernels(cupy: Any) -> str:
    """Why a fresh CuPy kernel or eyelike's kernel failed; "" if both ran."""
    import numpy as np

    try:
        # A name of its own, so CuPy's on-disk cache cannot serve it: this
        # compiles with NVRTC, loads and launches here.
        kernel = cupy.ElementwiseKernel(
            "int32 x", "int32 y", "y = 2 * x + 1", f"eyelike_preflight_{os.getpid()}"
        )
        x = cupy.arange(1 << 20, dtype=cupy.int32)
        if not bool((kernel(x) == 2 * x + 1).all()):
            return "a CuPy kernel ran but computed wrong values"
    except Exception as exc:
        return f"a CuPy kernel did not compile or run: {type(exc).__name__}: {exc}"
    try:
        import eyelike

        # Both kernel families: a small output takes the element path, one
        # of 256 KiB or more the vector path.
        got = [
            eyelike.eye(n, n + 1, k=1, batch_shape=b, dtype="float32", xp=cupy).get()
            for n, b in [(3, 2), (64, 16)]  # 16 x 64 x 65 float32: 260 KiB
        ]
    except Exception as exc:
        return f"eyelike's CUDA kernel failed: {type(exc).__name__}: {exc}"
    for a in got:
        n, b = a.shape[-2], a.shape[0]
        want = np.broadcast_to(np.eye(n, n + 1, 1, dtype=np.float32), (b, n, n + 1))
        if not np.array_equal(a, want):
            return f"eyelike's CUDA kernel computed wrong values for {a.shape}"
    return ""


def _frameworks() -> None:
    """Whether torch and JAX see the GPU (the benchmark's other peers)."""
    try:
        import torch

        print(f"torch {torch.__version__}: cuda available {torch.cuda.is_available()}")
    except Exception as exc:  # the benchmark notes it and runs without
        print(f"torch: {type(exc).__name__}: {exc}")
    # As in the benchmark and the tests: JAX must not take 75% of the GPU.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax

        print(f"jax {jax.__version__}: default backend {jax.default_backend()}")
    except Exception as exc:  # likewise
        print(f"jax: {type(exc).__name__}: {exc}")


def _device() -> str:
    """Why CuPy cannot use a CUDA device here; "" if it can, kernels included."""
    try:
        import cupy

        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:
        return f"no usable CUDA device: {type(exc).__name__}: {exc}"
    if count == 0:
        return "CuPy sees no CUDA device (getDeviceCount() == 0)"
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else name
    print(
        f"cupy {cupy.__version__}: {count} device(s); device 0 {name}, "
        f"compute capability {props['major']}.{props['minor']}, "
        f"{props['totalGlobalMem'] / 2**30:.1f} GiB; CUDA runtime "
        f"{cupy.cuda.runtime.runtimeGetVersion()}, driver "
        f"{cupy.cuda.runtime.driverGetVersion()}"
    )
    why = _kernels(cupy)
    if not why:
        print("kernels: a fresh CuPy kernel and eyelike's kernel compiled and ran")
    return why


def probe() -> int:
    """The preflight; 0 when the GPU run can go ahead."""
    print(f"python {sys.version.split()[0]} at {sys.executable}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        why = _device()
    for w in caught:  # printed whether or not the device is usable
        print(
            f"WARNING at import cupy / first kernels: {w.category.__name__}: "
            f"{w.message} ({w.filename}:{w.lineno}). pytest's filterwarnings "
            f"= error makes this an error: the conftest probe then fails, and "
            f"under EYELIKE_REQUIRE_GPU=1 every GPU test fails with it."
        )
    if why:
        return _fail(why)
    missing = []
    for module in REQUIRED + OPTIONAL:
        version = _version(module)
        if module in OPTIONAL and version.startswith("MISSING"):
            version = f"absent, optional{version.removeprefix('MISSING')}"
        elif version.startswith("MISSING"):
            missing.append(module)
        print(f"{module}: {version}")
    _frameworks()
    if missing:
        return _fail(
            f"the GPU tests need {', '.join(missing)}: carry their wheels in "
            f".whl/ (scripts/gpu-wheels.sh downloads them)"
        )
    print("PREFLIGHT OK")
    return 0


def missing_wheels(folder: str) -> int:
    """Print each wheel in ``folder`` whose distribution is not installed."""
    for wheel in sorted(Path(folder).glob("*.whl")):
        dist = wheel.name.split("-")[0]
        try:
            importlib.metadata.distribution(dist)
        except importlib.metadata.PackageNotFoundError:
            print(wheel)
    return 0


def main(argv: list[str]) -> int:
    if argv == ["probe"]:
        return probe()
    if len(argv) == 2 and argv[0] == "missing-wheels":
        return missing_wheels(argv[1])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
