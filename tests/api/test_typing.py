"""The public types as a user's type checker sees them: ``mypy --strict``
and pyright in strict mode on the same user files (``typing_returns.py``:
NumPy; ``typing_returns_libraries.py``: torch, JAX, CuPy and the others),
where torch, JAX and CuPy are installed (this environment) and, for pyright,
where they are not (an environment made here with NumPy alone; the ``lint``
session runs mypy where they are not). Each file must pass; a probe must
show that the check sees the libraries' real types (or, without them, none)
and can fail; and no signature may hold a type pyright finds Unknown (its
strict mode reports each use of one: ``reportUnknownMemberType``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import pytest

import eyelike

pytest.importorskip("mypy", reason="mypy is in the newest pinned set only")
pytest.importorskip("torch")
pytest.importorskip("jax")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
USER_FILES = [HERE / "typing_returns.py", HERE / "typing_returns_libraries.py"]
# The eyelike under test: this checkout's src where it is the one imported
# (the checkers read no PYTHONPATH; an installed one may be another's).
SRC = Path(eyelike.__file__).resolve().parents[1]

# If torch or JAX were Any to mypy (no type information found), every
# assert_type about them would pass; the probe's notes show they are not,
# and its wrong assert_type that mypy does report errors here.
PROBE = """\
from typing import assert_type, reveal_type

import jax
import jax.numpy as jnp
import torch

from eyelike import eye

reveal_type(eye(3, xp=torch))
reveal_type(eye(3, xp=jnp))
assert_type(eye(3, xp=torch), jax.Array)
"""


@pytest.mark.slow
def test_the_user_files_pass_mypy_strict_with_torch_and_jax(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    probe = tmp_path / "typing_probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    cache = getattr(pytestconfig, "cache", None)  # (None under -p no:cacheprovider)
    env = dict(os.environ)
    if SRC == ROOT / "src":
        env["MYPYPATH"] = str(SRC)
    command = [
        *(sys.executable, "-m", "mypy", "--strict"),
        # The user's view: errors in what the checked files import (eyelike,
        # torch, ...) are not theirs, and not reported.
        "--follow-imports=silent",
        *("--config-file", str(ROOT / "pyproject.toml")),
        # (A cache of its own: analysing torch takes most of a minute.)
        *("--cache-dir", str(cache.mkdir("mypy") if cache else tmp_path / "cache")),
        *("--no-error-summary", "--hide-error-context"),
        *map(str, USER_FILES),
        str(probe),
    ]
    result = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stdout + result.stderr
    # The user files: nothing; the probe: the real types, and its error.
    # (Its path is not compared: from its cache mypy may name the probe's
    # file of an earlier run, the same text in another tmp_path.)
    assert [line.partition(":")[2] for line in lines] == [
        '9: note: Revealed type is "torch._tensor.Tensor"',
        '10: note: Revealed type is "jax._src.basearray.Array"',
        '11: error: Expression is of type "Tensor", not "Array"  [assert-type]',
    ], result.stdout + result.stderr
    assert all("typing_probe.py:" in line for line in lines), result.stdout


# pyright's probe: each public signature whole (none may hold Unknown), the
# libraries' results, and a wrong assert_type, which pyright reports where
# torch and JAX are known (and not where they are unknown, so Any).
PYRIGHT_PROBE = """\
from typing import assert_type, reveal_type

import cupy  # pyright: ignore[reportMissingTypeStubs]
import jax.numpy as jnp
import torch

import eyelike
from eyelike import eye

reveal_type(eyelike.eye)
reveal_type(eyelike.eye_like)
reveal_type(eyelike.onnx.eye_like)
reveal_type(eyelike.openvino.eye)
reveal_type(eyelike.eye(3))
reveal_type(eyelike.eye(3, xp=torch))
reveal_type(eyelike.eye(3, xp=jnp))
reveal_type(eyelike.eye(3, xp=cupy))
assert_type(eye(3, xp=torch), jnp.ndarray)  # pyright: ignore[reportUnknownMemberType]
"""
SIGNATURES = ["eyelike.eye", "eyelike.eye_like", "eyelike.onnx.eye_like"]
SIGNATURES.append("eyelike.openvino.eye")
NUMPY_EYE = ("eyelike.eye(3)", "ndarray[tuple[Any, ...], dtype[float64]]")
# Where it cannot run: in CI (CI=true) a failure, not a skip; the newest
# pinned set (this module's mypy says it is that set) has pyright.
NO_PYRIGHT = "pyright is in the newest pinned set: pip install 'pyright[nodejs]'"


def _pyright(tmp_path: Path, python: str, files: list[Path]) -> list[dict[str, Any]]:
    """pyright in strict mode on ``files`` with ``python``'s installed
    libraries (and this eyelike): its diagnostics, with the probe's."""
    if importlib.util.find_spec("pyright") is None:
        if os.environ.get("CI"):
            pytest.fail(NO_PYRIGHT)
        pytest.skip(NO_PYRIGHT)
    probe = tmp_path / "pyright_probe.py"
    probe.write_text(PYRIGHT_PROBE, encoding="utf-8")
    config = tmp_path / "pyrightconfig.json"
    settings = {"typeCheckingMode": "strict", "extraPaths": [str(SRC)]}
    config.write_text(json.dumps(settings), encoding="utf-8")
    # The bundled pyright, offline: no version asked of the registry (which
    # --outputjson also stops), none other forced.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYRIGHT_PYTHON")}
    env["PYRIGHT_PYTHON_IGNORE_WARNINGS"] = "1"
    command = [sys.executable, "-m", "pyright", "--outputjson", "-p", str(config)]
    command += ["--pythonpath", python, *map(str, files), str(probe)]
    result = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=tmp_path, check=False
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    report = json.loads(result.stdout)
    diagnostics: list[dict[str, Any]] = report["generalDiagnostics"]
    assert report["summary"]["filesAnalyzed"] == len(files) + 1, result.stdout
    return diagnostics


def _errors(diagnostics: list[dict[str, Any]]) -> list[str]:
    """Each error or warning: its file's name, line and rule."""
    return [
        f"{Path(d['file']).name}:{d['range']['start']['line'] + 1} {d.get('rule')}"
        for d in diagnostics
        if d["severity"] != "information"
    ]


def _messages(diagnostics: list[dict[str, Any]]) -> str:
    return "\n".join(f"{d['severity']}: {d['message']}" for d in diagnostics)


def _revealed(diagnostics: list[dict[str, Any]]) -> dict[str, str]:
    """The probe's reveal_type notes: each expression's type, by its text."""
    revealed = {}
    for diagnostic in diagnostics:
        what, _, rest = diagnostic["message"].partition('" is "')
        if diagnostic["severity"] == "information" and what.startswith("Type of "):
            revealed[what.removeprefix('Type of "')] = rest.removesuffix('"')
    return revealed


def _check_signatures(revealed: dict[str, str]) -> None:
    for name in SIGNATURES:
        assert revealed[name].startswith("Overload["), revealed[name]
        assert "Unknown" not in revealed[name], f"{name}: {revealed[name]}"


@pytest.mark.slow
def test_the_user_files_pass_pyright_strict_with_torch_jax_and_cupy(
    tmp_path: Path,
) -> None:
    for name in ("torch", "jax", "cupy"):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed (the newest pinned set has it)")
    diagnostics = _pyright(tmp_path, sys.executable, USER_FILES)
    # The user files: nothing; the probe: its wrong assert_type only.
    assert _errors(diagnostics) == ["pyright_probe.py:18 reportAssertTypeFailure"], (
        _messages(diagnostics)
    )
    revealed = _revealed(diagnostics)
    _check_signatures(revealed)
    assert revealed[NUMPY_EYE[0]] == NUMPY_EYE[1]
    assert revealed["eyelike.eye(3, xp=torch)"] == "Tensor"
    assert revealed["eyelike.eye(3, xp=jnp)"] == "Array"
    # CuPy ships no type information: Unknown to pyright, as cupy.ndarray is.
    assert revealed["eyelike.eye(3, xp=cupy)"] == "Unknown"


@pytest.mark.slow
def test_the_package_passes_pyright_with_torch_jax_and_cupy(tmp_path: Path) -> None:
    """eyelike's own code, by pyright's standard rules, with the libraries
    it drives installed (the lint session's mypy --strict has none of
    them): no error. Each ``# pyright: ignore`` names its rule and says why
    (a ``type(k) is int`` test, which torch.compile guards more cheaply
    than isinstance, is one type checkers do not narrow by)."""
    for name in ("torch", "jax", "cupy"):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed (the newest pinned set has it)")
    if importlib.util.find_spec("pyright") is None:
        if os.environ.get("CI"):
            pytest.fail(NO_PYRIGHT)
        pytest.skip(NO_PYRIGHT)
    config = tmp_path / "pyrightconfig.json"
    config.write_text(json.dumps({"typeCheckingMode": "standard"}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYRIGHT_PYTHON")}
    env["PYRIGHT_PYTHON_IGNORE_WARNINGS"] = "1"
    command = [sys.executable, "-m", "pyright", "--outputjson", "-p", str(config)]
    command += ["--pythonpath", sys.executable, str(SRC / "eyelike")]
    result = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=tmp_path, check=False
    )
    report = json.loads(result.stdout)
    assert report["summary"]["filesAnalyzed"] >= 30, result.stdout
    errors = [
        f"{Path(d['file']).name}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert not errors, "\n".join(errors)


def _numpy_only(tmp_path: Path) -> str:
    """A Python environment with NumPy and array-api-compat (eyelike's own
    dependencies) and nothing else installed: its interpreter."""
    where = tmp_path / "numpy-only"
    venv.EnvBuilder(symlinks=True, with_pip=False).create(where)
    python = where / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    for name in ("numpy", "array_api_compat"):
        spec = importlib.util.find_spec(name)
        assert spec is not None
        assert spec.submodule_search_locations is not None
        package = Path(next(iter(spec.submodule_search_locations)))
        (Path(site) / name).symlink_to(package, target_is_directory=True)
    return str(python)


@pytest.mark.slow
def test_the_user_file_passes_pyright_strict_without_torch_jax_and_cupy(
    tmp_path: Path,
) -> None:
    python = _numpy_only(tmp_path / "env")
    diagnostics = _pyright(tmp_path, python, USER_FILES[:1])
    # The user file: nothing; the probe: the three libraries are missing
    # (so their types are unknown: its assert_type passes).
    assert _errors(diagnostics) == [
        f"pyright_probe.py:{line} reportMissingImports" for line in (3, 4, 5)
    ], _messages(diagnostics)
    revealed = _revealed(diagnostics)
    _check_signatures(revealed)
    assert revealed[NUMPY_EYE[0]] == NUMPY_EYE[1]
    for name in ("torch", "jnp", "cupy"):
        assert revealed[f"eyelike.eye(3, xp={name})"] == "Any"
