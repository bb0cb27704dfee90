"""Helpers the tests share: the GPU probe, the namespaces the ``xp`` fixture
runs over, the reference eye (Python-int arithmetic), conversion to NumPy,
and the checks that bad input fails before anything is built."""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np
import pytest

from eyelike import _backends as _registry


def _cuda_device_count() -> tuple[int, str]:
    """How many CUDA devices CuPy sees, and, when none, the probe's error.

    Every failure means "no GPU" for the skips, but its text is kept for the
    skip reason: a bare "none found" once hid the real cause. That includes
    a warning: under ``filterwarnings = ["error"]`` one warning at ``import
    cupy`` raises here, and is named as such rather than read as no device.
    """
    try:
        import cupy

        count = int(cupy.cuda.runtime.getDeviceCount())
    except Warning as exc:  # a warning that pytest's filters made an error
        return 0, (
            f"a warning at import cupy or the device query, raised as an error "
            f"by filterwarnings: {type(exc).__name__}: {exc}"
        )
    except Exception as exc:  # no CuPy, no driver, no device: all mean "no GPU"
        return 0, f"{type(exc).__name__}: {exc}"
    if count == 0:
        return 0, "cupy.cuda.runtime.getDeviceCount() returned 0"
    return count, ""


_GPU_COUNT, _GPU_PROBE_ERROR = _cuda_device_count()
# EYELIKE_REQUIRE_GPU=1 (set by scripts/gpu-check.sh) is for a run that exists
# to exercise the GPU: there a failed probe must not turn every GPU test into
# a green skip, so the tests run and fail on the very error the probe met.
HAS_GPU = _GPU_COUNT > 0 or os.environ.get("EYELIKE_REQUIRE_GPU", "") not in ("", "0")
GPU_REASON = f"needs a CUDA device and CuPy; the probe found none: {_GPU_PROBE_ERROR}"
SENTINEL = 7  # never a value eyelike writes: marks elements nothing touched


def missing_gpu_piece(reason: str) -> NoReturn:
    """Skip for a missing GPU piece; fail instead under EYELIKE_REQUIRE_GPU=1,
    where a run that exists to use the GPU must not pass by skipping."""
    if os.environ.get("EYELIKE_REQUIRE_GPU", "") not in ("", "0"):
        pytest.fail(f"EYELIKE_REQUIRE_GPU is set, but {reason}")
    pytest.skip(reason)


# (fixture id, module to import, needs a GPU): every library eyelike has a
# backend for, from its registry. Dask and cubed are left out: their arrays
# are lazy, and test_dask.py and test_cubed.py test them as such. CuPy
# computes on a GPU only.
NAMESPACES = [
    (cls.name, cls.namespaces[0], cls.name == "cupy")
    for cls in _registry.BACKENDS
    if cls.name not in ("dask", "cubed")
]


def backend_name(xp: Any) -> str:
    name = xp.__name__
    return {"jax.numpy": "jax", "array_api_strict": "array_api_strict"}.get(
        name, name.split(".")[0]
    )


# The standard's numeric and bool dtypes, written here rather than read
# from eyelike, so that the tests do not take the code's word for them.
STANDARD_DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
# CuPy's: the standard's, float16, and ml_dtypes' bfloat16.
CUPY_DTYPES = [*STANDARD_DTYPES, "float16", "bfloat16"]


def dtype_names(xp: Any) -> list[str]:
    """The dtype names each namespace is expected to support."""
    standard = list(STANDARD_DTYPES)
    name = backend_name(xp)
    if name == "numpy":
        return [*standard, "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"]
    if name == "cupy":
        return list(CUPY_DTYPES)
    if name == "torch":
        return [*standard, "float16", "bfloat16"]
    if name == "jax":
        import jax

        if jax.config.jax_enable_x64:
            return [*standard, "float16", "bfloat16"]
        wide = {"int64", "uint64", "float64", "complex128"}
        return [n for n in standard if n not in wide] + ["float16", "bfloat16"]
    return standard


def to_numpy(x: Any) -> np.ndarray[Any, Any]:
    """A NumPy copy of any backend's array, widened so values compare exactly."""
    arr = _registry.backend_of_array(x).to_numpy(x)
    if arr.dtype.type.__module__ == "ml_dtypes":
        arr = arr.astype(np.float32)
    return arr


def reference(
    batch: tuple[int, ...], n_rows: int, n_cols: int, k: Any
) -> np.ndarray[Any, Any]:
    """The rule ``col - row == k`` evaluated with Python ints (no overflow).

    Deliberately independent of the library: no clamping, object arithmetic.
    """
    diff = np.subtract.outer(np.arange(n_cols), np.arange(n_rows)).T.astype(object)
    ks = np.empty(batch, dtype=object)
    ks[...] = k if isinstance(k, int) else _object_array(k)
    out = np.zeros((*batch, n_rows, n_cols), dtype=bool)
    for index in np.ndindex(*batch):
        out[index] = diff == ks[index]
    return out


def _object_array(k: Any) -> np.ndarray[Any, Any]:
    if hasattr(k, "shape") and not isinstance(k, (np.ndarray, np.generic)):
        k = to_numpy(k)  # CuPy refuses np.asarray; any library's array
    arr = np.empty(np.shape(k), dtype=object)
    flat = np.asarray(k, dtype=object).ravel().tolist()
    arr.ravel()[:] = [int(v) for v in flat]
    return arr


def raises_before_allocating(
    call: Callable[[], Any], exc: type[Exception], *words: str
) -> str:
    """``call()`` raises ``exc`` naming ``words``, with < 1 MiB traced: it was
    refused before anything near an output's size was allocated."""
    tracemalloc.start()
    try:
        with pytest.raises(exc) as info:
            call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(info.value)
    for word in words:
        assert word in message, (word, message)
    assert peak < 1 << 20, peak
    return message


def forbid_building(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> None:
    """Replace ``module.name`` by a function that fails the test if called."""

    def never(*args: Any, **kwargs: Any) -> Any:
        msg = "reached the builder with bad input"
        raise AssertionError(msg)

    monkeypatch.setattr(module, name, never)
