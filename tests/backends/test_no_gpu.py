"""A GPU library without a usable GPU: CuPy with no device or no driver, torch
asked for a CUDA device it cannot use, JAX asked for a GPU platform it lacks.
Each is one ``ValueError`` naming the device (`no_usable_device`), raised
before anything is allocated, and the command line prints the same words.

Bug: CuPy installed on a machine with no usable GPU raised CuPy's own
``CUDARuntimeError: cudaErrorInsufficientDriver`` at the first allocation,
while the command line said "backend cupy: no usable CUDA device on this
machine"; torch and JAX each said it in words of their own. The tests make
each library report no device (and run the real case where it has none), and
compare the API's message with the command line's and with the one written
out here: with CuPy's raw error, or any other wording, they fail.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import GPU_REASON, HAS_GPU

import eyelike
from eyelike._cli import main

HAS_CUPY = importlib.util.find_spec("cupy") is not None
NO_CUPY = "needs CuPy installed"


def _cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The command line's error line for ``argv``, less its ``eyelike: error:``."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    prefix = "eyelike: error: "
    lines = [line for line in err.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1, err
    return lines[0].removeprefix(prefix)


def _api_error(call: Callable[[], Any]) -> str:
    with pytest.raises(ValueError) as info:
        call()
    return str(info.value)


def _no_cuda(kind: str) -> str:
    return f"no usable {kind} device on this machine"


# ------------------------------------------------------------------ CuPy


@pytest.fixture(params=["raises", "zero"])
def cupy_without_device(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Any:
    """CuPy, made to report no device: its device count raising what CuPy
    raises without a driver (``cudaErrorInsufficientDriver``), or 0."""
    if not HAS_CUPY:
        pytest.skip(NO_CUPY)
    import cupy
    from cupy_backends.cuda.api.runtime import CUDARuntimeError

    from eyelike._backends import cupy as _cupy

    def raises() -> int:
        raise CUDARuntimeError(35)  # cudaErrorInsufficientDriver

    monkeypatch.setattr(
        cupy.cuda.runtime,
        "getDeviceCount",
        raises if request.param == "raises" else lambda: 0,
    )
    # A yes from an earlier call (on a GPU) is kept: forget it here.
    monkeypatch.setattr(_cupy, "_count", 0, raising=False)
    return cupy


def _real_cupy_without_device() -> Any:
    if not HAS_CUPY:
        pytest.skip(NO_CUPY)
    if HAS_GPU:
        pytest.skip("needs CuPy on a machine without a usable GPU")
    import cupy

    return cupy


def _fake_cupy_array(cupy: Any) -> Any:
    """A CuPy array over no memory: what ``x``/``out`` look like to eyelike
    where no device can make one. Never used where a GPU is (a kernel
    launched on it would fault)."""
    memory = cupy.cuda.UnownedMemory(0, 0, None, device_id=0)
    return cupy.ndarray(
        (3, 3), dtype=np.float32, memptr=cupy.cuda.MemoryPointer(memory, 0)
    )


# (API call of the namespace, the same call's command line, the message).
CUPY_FORMS = [
    pytest.param(
        lambda cp: eyelike.eye(3, xp=cp),
        ["3", "--backend", "cupy"],
        f"cupy cannot use its default device: {_no_cuda('CUDA')}",
        id="xp",
    ),
    pytest.param(
        lambda cp: eyelike.eye(2, batch_shape=3, k=[0, 1, 2], xp=cp),
        ["2", "--batch-shape", "3", "-k", "0,1,2", "--backend", "cupy"],
        f"cupy cannot use its default device: {_no_cuda('CUDA')}",
        id="xp batched per-matrix k",
    ),
    pytest.param(
        lambda cp: eyelike.eye(0, xp=cp),
        ["0", "--backend", "cupy"],
        f"cupy cannot use its default device: {_no_cuda('CUDA')}",
        id="xp empty",
    ),
    pytest.param(
        lambda cp: eyelike.eye(3, xp=cp, device=1),
        ["3", "--backend", "cupy", "--device", "1"],
        f"cupy cannot use device=1: {_no_cuda('CUDA')}",
        id="device id",
    ),
]


def _check_cupy_form(
    cp: Any,
    call: Callable[[Any], Any],
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _api_error(lambda: call(cp)) == message
    assert _cli_error(argv, capsys) == message


@pytest.mark.parametrize(("call", "argv", "message"), CUPY_FORMS)
def test_cupy_reported_without_device(
    cupy_without_device: Any,
    call: Callable[[Any], Any],
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _check_cupy_form(cupy_without_device, call, argv, message, capsys)


@pytest.mark.parametrize(("call", "argv", "message"), CUPY_FORMS)
def test_cupy_really_without_device(
    call: Callable[[Any], Any],
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The real case, nothing patched: CuPy installed, no usable GPU."""
    cp = _real_cupy_without_device()
    _check_cupy_form(cp, call, argv, message, capsys)


def _cupy_forms_without_cli(cp: Any) -> None:
    """The forms the command line has no words for: a ``cupy.cuda.Device``,
    an ``out``, ``eye_like``, Dask with CuPy chunks (arrays over no memory
    stand for ``out`` and ``x``)."""
    import dask
    import dask.array as da

    assert _api_error(lambda: eyelike.eye(3, xp=cp, device=cp.cuda.Device(0))) == (
        f"cupy cannot use device=<CUDA Device 0>: {_no_cuda('CUDA')}"
    )
    fake = _fake_cupy_array(cp)
    on_device_0 = f"cupy cannot use device=<CUDA Device 0>: {_no_cuda('CUDA')}"
    assert _api_error(lambda: eyelike.eye(3, out=fake)) == on_device_0
    assert _api_error(lambda: eyelike.eye(3, xp=cp, out=fake, device=0)) == (
        f"cupy cannot use device=0: {_no_cuda('CUDA')}"
    )
    assert _api_error(lambda: eyelike.eye_like(fake)) == on_device_0
    assert _api_error(lambda: eyelike.eye_like(fake, out=fake)) == on_device_0
    with dask.config.set({"array.backend": "cupy"}):
        assert _api_error(lambda: eyelike.eye(3, xp=da)) == (
            f"cupy cannot use its default device: {_no_cuda('CUDA')}"
        )


def test_cupy_forms_without_cli_reported_without_device(
    cupy_without_device: Any,
) -> None:
    if HAS_GPU:
        pytest.skip("arrays over no memory are for a machine without a GPU")
    _cupy_forms_without_cli(cupy_without_device)


def test_cupy_forms_without_cli_really_without_device() -> None:
    _cupy_forms_without_cli(_real_cupy_without_device())


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason=GPU_REASON)
def test_cupy_out_untouched_and_x_refused_on_gpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a GPU made to report none: an ``out`` is refused untouched, and
    ``eye_like`` of an array there is refused too (no call reaches CuPy's
    allocator without the check)."""
    import cupy

    from eyelike._backends import cupy as _cupy

    out = cupy.full((3, 3), 7, dtype=cupy.float32)
    x = cupy.zeros((2, 3, 3), dtype=cupy.float32)
    out_like = cupy.full(x.shape, 7, dtype=cupy.float32)
    monkeypatch.setattr(cupy.cuda.runtime, "getDeviceCount", lambda: 0)
    monkeypatch.setattr(_cupy, "_count", 0)
    for call in (
        lambda: eyelike.eye(3, out=out),
        lambda: eyelike.eye_like(x, out=out_like),
        lambda: eyelike.eye_like(x),
    ):
        assert _no_cuda("CUDA") in _api_error(call)
    assert bool((out == 7).all())
    assert bool((out_like == 7).all())


def test_cupy_keeps_a_yes_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A usable device is asked about once per process (a call on a working
    GPU pays one global read); no device is asked about each time."""
    if not HAS_CUPY:
        pytest.skip(NO_CUPY)
    import cupy

    from eyelike._backends import cupy as _cupy

    asked: list[int] = []
    count = 0

    def device_count() -> int:
        asked.append(count)
        return count

    monkeypatch.setattr(cupy.cuda.runtime, "getDeviceCount", device_count)
    monkeypatch.setattr(_cupy, "_count", 0)
    for _ in range(2):
        with pytest.raises(ValueError, match="no usable CUDA device"):
            _cupy.check_usable()
    assert asked == [0, 0]
    count = 1
    for _ in range(3):
        _cupy.check_usable(0)
    assert asked == [0, 0, 1]
    # A device id past the count, refused before CuPy's invalid ordinal.
    for device in (1, 7, -1, cupy.cuda.Device(3)):
        with pytest.raises(ValueError, match=r"this machine has 1 CUDA device \(ids"):
            eyelike.eye(3, xp=cupy, device=device)
    assert asked == [0, 0, 1]


# ----------------------------------------------------------------- torch


@pytest.fixture(params=["reported", "real"])
def torch_without_cuda(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Any:
    """torch, its CUDA made unavailable, or as it is where it has none."""
    torch = pytest.importorskip("torch")
    if request.param == "reported":
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    elif torch.cuda.is_available():
        pytest.skip("needs torch without a usable CUDA device")
    return torch


@pytest.mark.parametrize(
    ("device", "shown"), [("cuda", "'cuda'"), ("cuda:0", "'cuda:0'")]
)
def test_torch_device_name(
    torch_without_cuda: Any,
    device: str,
    shown: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    torch = torch_without_cuda
    message = f"torch cannot use device={shown}: {_no_cuda('CUDA')}"
    assert _api_error(lambda: eyelike.eye(3, xp=torch, device=device)) == message
    cli = _cli_error(["3", "--backend", "torch", "--device", device], capsys)
    assert cli == message
    # With an out: refused before it is touched.
    out = torch.full((3, 3), 7.0)
    assert _api_error(lambda: eyelike.eye(3, device=device, out=out)) == message
    assert bool((out == 7).all())


def test_torch_device_object(torch_without_cuda: Any) -> None:
    """A ``torch.device`` takes the short path first (`short_eye`): where
    torch cannot make it there, the general path says why."""
    torch = torch_without_cuda
    for device in (torch.device("cuda"), torch.device("cuda", 0)):
        message = f"torch cannot use device={device!r}: {_no_cuda('CUDA')}"
        for dtype in (None, torch.float32, torch.int64):
            got = _api_error(
                lambda d=device, t=dtype: eyelike.eye(3, xp=torch, device=d, dtype=t)
            )
            assert got == message
        got = _api_error(
            lambda d=device: eyelike.eye(2, 3, batch_shape=(2,), xp=torch, device=d)
        )
        assert got == message


def test_torch_other_device_type_in_the_same_words() -> None:
    torch = pytest.importorskip("torch")
    if torch.backends.mps.is_available():
        pytest.skip("this torch has a usable MPS device")
    got = _api_error(lambda: eyelike.eye(3, xp=torch, device="mps"))
    assert got == f"torch cannot use device='mps': {_no_cuda('MPS')}"


# ------------------------------------------------------------------- JAX


@pytest.fixture(params=["reported", "real"])
def jax_without_gpu(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Any:
    """JAX, with no GPU platform, as it says where it has none."""
    jax = pytest.importorskip("jax")
    if request.param == "reported":
        devices = jax.devices

        def without_gpu(backend: Any = None) -> Any:
            if backend in ("gpu", "cuda", "rocm"):
                msg = f"Unknown backend {backend}. Available backends are ['cpu']"
                raise RuntimeError(msg)
            return devices(backend)

        monkeypatch.setattr(jax, "devices", without_gpu)
    else:
        try:
            jax.devices("gpu")
        except RuntimeError:
            pass
        else:
            pytest.skip("this JAX has a GPU")
    return jax


@pytest.mark.parametrize(
    ("device", "kind"), [("gpu", "GPU"), ("cuda", "CUDA"), ("rocm", "ROCm")]
)
def test_jax_gpu_platform(
    jax_without_gpu: Any, device: str, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    jnp = jax_without_gpu.numpy
    message = f"jax cannot use device={device!r}: {_no_cuda(kind)}"
    assert _api_error(lambda: eyelike.eye(3, xp=jnp, device=device)) == message
    cli = _cli_error(["3", "--backend", "jax", "--device", device], capsys)
    assert cli == message


def test_jax_unknown_platform_is_not_a_gpu() -> None:
    jnp = pytest.importorskip("jax.numpy")
    got = _api_error(lambda: eyelike.eye(3, xp=jnp, device="banana"))
    assert got == "device 'banana' is not a JAX platform here"
