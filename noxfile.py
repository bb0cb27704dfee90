# /// script
# dependencies = ["nox>=2024.10"]
# ///
"""Sessions: ``tests`` (default, CPU), ``lint`` (default), ``gpu`` (opt-in)."""

from __future__ import annotations

import nox

nox.needs_version = ">=2024.10"
nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests", "lint"]

PYPROJECT = nox.project.load_toml("pyproject.toml")
TEST_DEPS = nox.project.dependency_groups(PYPROJECT, "test")
LINT_DEPS = nox.project.dependency_groups(PYPROJECT, "lint")
DOCS_DEPS = nox.project.dependency_groups(PYPROJECT, "docs")
# One file per fuzzed entry point, and the regressions they found.
FUZZ_FILES = [
    f"tests/test_fuzz_{name}.py"
    for name in ("eye", "eye_like", "onnx", "openvino", "cli", "regressions")
]


@nox.session
def tests(session: nox.Session) -> None:
    """CPU tests on every namespace that installs here (GPU tests skip)."""
    session.install("-e", ".", *TEST_DEPS)
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint + format) and mypy --strict on src."""
    session.install("-e", ".", *LINT_DEPS)
    session.run("ruff", "check", "src", "tests", "scripts", "noxfile.py")
    session.run("ruff", "format", "--check", "src", "tests", "scripts", "noxfile.py")
    session.run("mypy", "--strict", "src")
    session.run("mypy", "--strict", "tests/typing_returns.py")


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site (docs/_build/html), warnings as errors, then
    every example in it run as a doctest. Offline: no intersphinx, no
    remote assets."""
    session.install("-e", ".", *DOCS_DEPS)
    strict = ["-W", "--keep-going", "--fresh-env"]
    session.run("sphinx-build", "-b", "html", *strict, "docs", "docs/_build/html")
    session.run("sphinx-build", "-b", "doctest", *strict, "docs", "docs/_build/doctest")


@nox.session(default=False)
def gpu(session: nox.Session) -> None:
    """Every test marked ``gpu``, over the whole suite; installs cupy-cuda12x
    where CuPy is missing. Where no GPU is usable they fail, not skip: a GPU
    session that skipped everything would look green."""
    session.install("-e", ".", *TEST_DEPS)
    try:
        session.run("python", "-c", "import cupy", silent=True)
    except nox.command.CommandFailed:
        session.install("cupy-cuda12x")
    session.run(
        "pytest",
        "-m",
        "gpu",
        "-rs",
        *session.posargs,
        # JAX takes 75% of the GPU at first use unless told not to, which
        # would starve the CuPy tests that need several GiB.
        env={"EYELIKE_REQUIRE_GPU": "1", "XLA_PYTHON_CLIENT_PREALLOCATE": "false"},
    )


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """``eyelike bench`` against every installed peer; extra args go to it."""
    session.install("-e", ".[bench]", "torch==2.13.0", "jax", "onnx", "onnxruntime")
    session.install("openvino")
    session.run("eyelike", "bench", *session.posargs)


@nox.session(default=False)
def fuzz(session: nox.Session) -> None:
    """The long fuzz run: the CI's bounded fuzzing, scaled up."""
    session.install("-e", ".", *TEST_DEPS)
    session.env["EYELIKE_FUZZ_EXAMPLES"] = "20000"
    session.run("pytest", *FUZZ_FILES, *session.posargs)
