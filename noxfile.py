# /// script
# dependencies = ["nox>=2024.10"]
# ///
"""What each session is for:

- ``tests`` (default): the CPU tests on the pinned newest set;
- ``tests-oldest``: the same tests on the lowest versions we declare;
- ``collect``: the suite collected where only NumPy is installed (every
  module imports or skips with a reason);
- ``lint`` (default): ruff and mypy;
- ``docs``: the documentation, warnings as errors, examples as doctests;
- ``tests-latest``: the tests on the newest releases, unpinned (drift seen
  before the pins move);
- ``lock``, ``lock-oldest``: regenerate the pinned sets (newest, oldest);
- ``gpu``: the tests marked ``gpu`` (a CUDA machine);
- ``bench``: the benchmark; ``fuzz``: the long fuzz run.

``tests``, ``tests-oldest``, ``lint`` and ``docs`` install the pinned sets in
``requirements/`` (made by ``nox -s lock`` and ``nox -s lock-oldest`` from the
dependency groups below, so that an upstream release cannot turn main red
without a commit of ours).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import nox

nox.needs_version = ">=2024.10"
nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests", "lint"]

PYPROJECT = nox.project.load_toml("pyproject.toml")
TEST_DEPS = nox.project.dependency_groups(PYPROJECT, "test")
LINT_DEPS = nox.project.dependency_groups(PYPROJECT, "lint")
DOCS_DEPS = nox.project.dependency_groups(PYPROJECT, "docs")
NAMESPACES_DEPS = nox.project.dependency_groups(PYPROJECT, "namespaces")
GROUPS = {
    "test": TEST_DEPS,
    "lint": LINT_DEPS,
    "docs": DOCS_DEPS,
    "namespaces": NAMESPACES_DEPS,
}
PROJECT_DEPS = PYPROJECT["project"]["dependencies"]
# What a pinned set builds eyelike with: hatchling asks for editables to
# build an editable install with a force-include (the kernels/ folder).
BUILD_DEPS = [*PYPROJECT["build-system"]["requires"], "editables>=0.5"]
LOCKS = Path("requirements")
# The pinned sets are resolved for one Python (and Linux x86_64): the
# sessions that install them, and the one that makes them, run on it.
PINNED_PYTHON = "3.11"
# What `nox -s fuzz` runs, each hypothesis test at EYELIKE_FUZZ_EXAMPLES
# examples (tests/helpers/fuzz_strategies.py's `fuzz` settings): one file per
# fuzzed entry point, the regressions they found, and the short paths
# compared with the general path on the fuzzers' inputs.
FUZZ_FILES = [
    *(
        f"tests/{where}/test_fuzz_{name}.py"
        for where, name in (
            ("api", "eye"),
            ("api", "eye_like"),
            ("adapters", "onnx"),
            ("adapters", "openvino"),
            ("cli", "cli"),
            ("api", "regressions"),
        )
    ),
    "tests/api/test_short_path.py",
]


def install_locked(session: nox.Session, group: str) -> None:
    """The group's pinned set, then eyelike itself (editable) on top of it,
    built by the pinned hatchling so that nothing unpinned is fetched."""
    session.install("-r", str(LOCKS / f"{group}.txt"))
    session.install("--no-deps", "--no-build-isolation", "-e", ".")


@nox.session(python=PINNED_PYTHON)
def tests(session: nox.Session) -> None:
    """CPU tests on every namespace that installs here (GPU tests skip)."""
    install_locked(session, "test")
    session.run("pytest", *session.posargs)


@nox.session(name="tests-oldest", python=PINNED_PYTHON, default=False)
def tests_oldest(session: nox.Session) -> None:
    """The CPU tests on the lowest versions the project declares
    (``requirements/test-oldest.txt``): each lower bound is a tested claim."""
    install_locked(session, "test-oldest")
    session.run("pytest", *session.posargs)


# The libraries `nox -s collect` leaves out: every optional one the tests
# import (the test set's, the namespaces', the GPU's).
OPTIONAL = ("torch", "jax", "dask", "cupy", "ml_dtypes", "array_api_strict")
OPTIONAL += ("onnx", "onnxruntime", "openvino", "mypy", "pyright", "matplotlib")
OPTIONAL += ("cubed", "sparse", "marray", "ndonnx", "mlx")


def _name(requirement: str) -> str:
    """A requirement's project name (``"pytest>=8"``: ``"pytest"``)."""
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]


@nox.session(python=PINNED_PYTHON, default=False)
def collect(session: nox.Session) -> None:
    """The whole suite collected with NumPy and nothing optional: eyelike's
    own dependencies, pytest and hypothesis (what conftest.py imports), at
    the test set's pins (``requirements/test.txt`` as constraints, their
    dependencies too). A module whose library is missing skips with a
    reason; a collection error, or nothing collected, fails."""
    core = ("pytest", "hypothesis")
    wanted = [*PROJECT_DEPS, *(d for d in TEST_DEPS if _name(d) in core)]
    session.install("-c", str(LOCKS / "test.txt"), *wanted, *BUILD_DEPS)
    session.install("--no-deps", "--no-build-isolation", "-e", ".")
    # Nothing optional came in with them (else the check proves less): any
    # that did is named, and fails the session.
    found = "import sys, importlib.util as u; "
    found += "sys.exit([n for n in sys.argv[1:] if u.find_spec(n)] or None)"
    session.run("python", "-c", found, *OPTIONAL)
    session.run("pytest", "--collect-only", "-qq", "-rs", *session.posargs)


@nox.session(python=PINNED_PYTHON, default=False)
def namespaces(session: nox.Session) -> None:
    """Third-party Array API namespaces through the generic path (pydata
    sparse, ndonnx, marray, mlx) and cubed's backend: the conformance
    matrix's forms on each, and the libraries' own tests of their eye with
    eyelike making it (``requirements/namespaces.txt``: the test set and
    these)."""
    install_locked(session, "namespaces")
    libs = " or ".join(("sparse", "ndonnx", "marray", "cubed", "mlx"))
    session.run(
        "pytest",
        "tests/backends/test_namespaces.py",
        "tests/backends/test_cubed.py",
        "tests/backends/test_own_eye_tests.py",
        "tests/matrix/test_matrix.py",
        "-k",
        f"test_namespaces or test_own_eye_tests or {libs}",
        *session.posargs,
    )


@nox.session(name="tests-latest", default=False)
def tests_latest(session: nox.Session) -> None:
    """The CPU tests against the newest release of every dependency (not in
    CI): what a ``nox -s lock`` would move the pins to."""
    session.install("--upgrade", "-e", ".", *TEST_DEPS)
    session.run("pip", "list")
    session.run("pytest", *session.posargs)


@nox.session(python=PINNED_PYTHON, default=False)
def lock(session: nox.Session) -> None:
    """Regenerate ``requirements/*.txt`` with pip-compile: for each group,
    the package's own dependencies, its build backend and the group, pinned
    for this machine's Python and platform."""
    session.install("pip-tools>=7.4")
    LOCKS.mkdir(exist_ok=True)
    # A path relative to the project, so the "via" notes do not change with
    # each run's temporary folder.
    tmp = Path(session.create_tmp()).resolve().relative_to(Path.cwd())
    for group, deps in GROUPS.items():
        source = tmp / f"{group}.in"
        source.write_text("\n".join([*PROJECT_DEPS, *BUILD_DEPS, *deps]) + "\n")
        session.run(
            "pip-compile",
            "--quiet",
            "--strip-extras",
            "--allow-unsafe",
            "--no-emit-find-links",
            "--no-emit-index-url",
            "--output-file",
            str(LOCKS / f"{group}.txt"),
            str(source),
            env={"CUSTOM_COMPILE_COMMAND": "nox -s lock"},
        )


@nox.session(name="lock-oldest", python=PINNED_PYTHON, default=False)
def lock_oldest(session: nox.Session) -> None:
    """Regenerate ``requirements/test-oldest.txt``: uv's lowest versions of
    our direct dependencies, the rest resolved to what they allow."""
    session.install("uv>=0.5")
    tmp = Path(session.create_tmp()).resolve()
    source = tmp / "test-oldest.in"
    # The package's own dependencies held to the release series they name,
    # which newer transitive releases would otherwise lift (NumPy 2 for a
    # NumPy >= 1.26). Without the CuPy kernel checks' tools: CuPy 14 needs
    # NumPy 2 (those tests skip here, and run on the newest set). Without
    # mypy and pyright: the typing test checks the types users see with the
    # newest libraries, whose stubs an old mypy may not read (it skips here).
    own = [r.replace(">=", "==") + ".*" for r in PROJECT_DEPS]
    tools = ("cupy-", "nvidia-", "mypy", "pyright")
    # (torch: the CPU build, which lies where pip's find-links point.)
    oldest = [
        d.replace("torch==2.13.0", "torch==2.13.0+cpu")
        for d in TEST_DEPS
        if not d.startswith(tools)
    ]
    # jax.export imports absl, which JAX before 0.7 does not declare.
    oldest.append("absl-py>=2.1")
    # (uv reads no pip configuration: the find-links and extra indexes pip
    # is given in the environment, passed on.)
    links = os.environ.get("PIP_FIND_LINKS", "").split()
    indexes = os.environ.get("PIP_EXTRA_INDEX_URL", "").split()
    source.write_text("\n".join([*own, *BUILD_DEPS, *oldest]) + "\n")
    session.run(
        "uv",
        "pip",
        "compile",
        "--quiet",
        "--resolution",
        "lowest-direct",
        "--python-version",
        PINNED_PYTHON,
        "--python-platform",
        "x86_64-manylinux_2_28",
        "--custom-compile-command",
        "nox -s lock-oldest",
        *[arg for link in links for arg in ("--find-links", link)],
        *[arg for index in indexes for arg in ("--extra-index-url", index)],
        "--output-file",
        str(LOCKS / "test-oldest.txt"),
        str(source),
    )


@nox.session(python=PINNED_PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (lint + format) and mypy --strict on src."""
    install_locked(session, "lint")
    where = ["src", "tests", "benchmarks", "scripts", "noxfile.py"]
    session.run("ruff", "check", *where)
    session.run("ruff", "format", "--check", *where)
    session.run("mypy", "--strict", "src", "benchmarks")
    # The public types where torch, JAX and CuPy are not installed (their
    # types Any); test_typing.py, in the tests session, checks them
    # installed, with mypy and pyright, and pyright without them.
    user_files = [
        "tests/api/typing_returns.py",
        "tests/api/typing_returns_libraries.py",
    ]
    session.run("mypy", "--strict", *user_files)


@nox.session(python=PINNED_PYTHON)
def docs(session: nox.Session) -> None:
    """The documentation site (docs/_build/html), warnings as errors, then
    every example in it run as a doctest. Offline: no intersphinx, no
    remote assets."""
    install_locked(session, "docs")
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


@nox.session(python=PINNED_PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """The benchmark (``benchmarks/``, not installed) against every peer the
    test set pins; extra args go to it (``nox -s bench -- --help``)."""
    install_locked(session, "test")
    session.run("python", "-m", "benchmarks", *session.posargs)


@nox.session(python=PINNED_PYTHON, default=False)
def fuzz(session: nox.Session) -> None:
    """The long fuzz run: the CI's bounded fuzzing, scaled up."""
    install_locked(session, "test")
    session.env["EYELIKE_FUZZ_EXAMPLES"] = "20000"
    session.run("pytest", *FUZZ_FILES, *session.posargs)
