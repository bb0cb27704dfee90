"""torch CUDA and JAX GPU on a real GPU (CuPy: ``test_cupy.py``). Skipped,
with the probe's reason, where no CUDA device is present;
``EYELIKE_REQUIRE_GPU=1`` makes them run, and fail, there instead.

Each test that targets one bug says in its docstring which bug, and why its
assertions cannot pass with it."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import GPU_REASON, HAS_GPU, SENTINEL, missing_gpu_piece, reference

import eyelike

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason=GPU_REASON)]


def test_torch_cuda() -> None:
    """Bug: a torch CUDA result made on the CPU (device dropped) or wrong.

    Each result must be a CUDA tensor equal to the reference: ``eye`` with
    ``device="cuda"``, ``eye_like`` of a CUDA tensor with per-matrix k (the
    generic path), and ``out=`` starting from 7s (every element written).
    """
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        missing_gpu_piece("this torch has no CUDA")
    got = eyelike.eye(
        5, 4, k=1, batch_shape=3, dtype="float32", xp=torch, device="cuda"
    )
    assert got.is_cuda
    np.testing.assert_array_equal(got.cpu().numpy(), reference((3,), 5, 4, 1))
    x = torch.full((3, 5, 4), SENTINEL, dtype=torch.float16, device="cuda")
    like = eyelike.eye_like(x, k=[0, 1, -1])
    assert like.device == x.device
    assert like.dtype == torch.float16
    np.testing.assert_array_equal(
        like.float().cpu().numpy(), reference((3,), 5, 4, [0, 1, -1])
    )
    out = torch.full((3, 5, 4), SENTINEL, dtype=torch.int16, device="cuda")
    assert eyelike.eye(5, 4, k=-2, batch_shape=3, out=out) is out
    np.testing.assert_array_equal(out.cpu().numpy(), reference((3,), 5, 4, -2))


def test_jax_gpu() -> None:
    """Bug: a JAX result made on the CPU while a GPU was asked for, or wrong.

    The result of ``eye`` on a GPU device and of ``eye_like`` of a GPU array
    must live on that GPU and equal the reference.
    """
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError as exc:  # this jaxlib has no GPU backend
        missing_gpu_piece(f"JAX has no GPU here: {exc}")
    got = eyelike.eye(5, 4, k=1, batch_shape=3, dtype="float32", xp=jnp, device=gpu)
    assert got.devices() == {gpu}
    np.testing.assert_array_equal(np.asarray(got), reference((3,), 5, 4, 1))
    x = jax.device_put(jnp.zeros((3, 5, 4), dtype=jnp.int32), gpu)
    like = eyelike.eye_like(x, k=[0, 1, -1])
    assert like.devices() == {gpu}
    np.testing.assert_array_equal(np.asarray(like), reference((3,), 5, 4, [0, 1, -1]))
