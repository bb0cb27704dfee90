"""The fixtures: ``xp`` over every installed namespace (GPU ones only with
a device), and ``jax_jit``. The helpers they share live in ``helpers``."""

from __future__ import annotations

import os

# Two CPU devices for JAX, so sharded arrays are tested on the CPU too. Set
# before anything imports jax (which reads it once).
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")

from typing import Any

import pytest
from helpers import GPU_REASON, HAS_GPU, NAMESPACES
from hypothesis import settings

# CI (CI=true) runs hypothesis with a fixed seed and no example database, so
# that a run's verdict is the commit's, not the draw's: exploring is for
# `nox -s fuzz` and for the developers' runs, which stay random.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
# The GPU check's (`--hypothesis-profile=gpu-check`): its device time is
# counted, and every CuPy example launches kernels; fixed draws, fewer.
settings.register_profile(
    "gpu-check", derandomize=True, database=None, max_examples=15, deadline=None
)

# EYELIKE_LIVE_REPORT=FILE: each test's start, outcome, time and failure,
# written as it happens, so a run killed at its time limit (or by a crash)
# still says what ran, what failed and where it stopped.
# (Made absolute here: a test may change the working directory. A report
# that cannot be written must not end the run it reports on.)
_LIVE = (
    os.path.abspath(os.environ["EYELIKE_LIVE_REPORT"])
    if os.environ.get("EYELIKE_LIVE_REPORT")
    else None
)


def _live(text: str) -> None:
    if _LIVE:
        try:
            with open(_LIVE, "a") as f:
                f.write(text)
        except OSError:
            pass


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _live(f"start {nodeid}\n")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" or not report.passed:
        text = f"{report.outcome} {report.duration:.2f}s {report.nodeid}\n"
        if report.failed:
            text += report.longreprtext[-4000:] + "\n"
        _live(text)


def _backend_params() -> list[Any]:
    params = []
    for name, module, gpu in NAMESPACES:
        marks = [pytest.mark.gpu] if gpu else []
        params.append(pytest.param((name, module, gpu), id=name, marks=marks))
    return params


@pytest.fixture(params=_backend_params())
def xp(request: pytest.FixtureRequest) -> Any:
    """Each installed array namespace in turn (GPU ones only with a device)."""
    name, module, gpu = request.param
    if gpu and not HAS_GPU:
        pytest.skip(GPU_REASON)
    mod = pytest.importorskip(module)
    marker = request.node.get_closest_marker("skip_xp_backend")
    if marker is not None and name in marker.args:
        pytest.skip(marker.kwargs.get("reason", f"not for {name}"))
    return mod


@pytest.fixture
def jax_jit() -> Any:
    jax = pytest.importorskip("jax")
    return jax.jit
