"""The conformance matrix's other entry points: the two operator adapters
(``eyelike.onnx.eye_like``, ``eyelike.openvino.eye``) with each input form
their operators allow, on each namespace's arrays, and the command line
through a pipe and a shell, on each backend. Each cell gives the oracle's
values and dtype (the tables: ``helpers/matrix.py``)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from helpers import matrix as table
from helpers import reference

import eyelike
from eyelike._validate.dtypes import dtype_name


def _value(result: Any) -> np.ndarray[Any, Any]:
    arr = np.asarray(eyelike._backends.backend_of_array(result).to_numpy(result))
    return arr.astype(np.float64)


@pytest.mark.parametrize("lib_name", table.lib_params())
@pytest.mark.parametrize(
    "form", table.ONNX_FORMS, ids=[f"{f.param}-{f.name}" for f in table.ONNX_FORMS]
)
def test_onnx_eye_like(lib_name: str, form: table.Form) -> None:
    lib = table.lib_or_skip(lib_name)
    x = lib.zeros((table.ROWS, table.COLS), dtype=lib.float32)
    kwargs = {form.param: form.make(lib)}
    result = eyelike.onnx.eye_like(x, **kwargs)
    if lib_name == "dask":
        result = result.compute()
    k = form.plain if form.param == "k" else 0
    dtype = form.plain if form.param == "dtype" else "float32"
    assert dtype_name(result.dtype) == (dtype or "float32")
    np.testing.assert_array_equal(
        _value(result), reference((), table.ROWS, table.COLS, k).astype(np.float64)
    )


@pytest.mark.parametrize("lib_name", table.lib_params())
@pytest.mark.parametrize(
    "form",
    table.OPENVINO_FORMS,
    ids=[f"{f.param}-{f.name}" for f in table.OPENVINO_FORMS],
)
def test_openvino_eye(lib_name: str, form: table.Form) -> None:
    lib = table.lib_or_skip(lib_name)
    if form.only and lib_name not in form.only:
        pytest.skip(f"{form.name}: {', '.join(form.only)} only")
    plain = {
        "num_rows": table.ROWS,
        "num_columns": table.COLS,
        "diagonal_index": lib.asarray(table.K, dtype=lib.int32),
        "batch_shape": table.BATCH,
        "output_type": "float32",
    }
    kwargs: dict[str, Any] = {
        "num_rows": lib.asarray(table.ROWS, dtype=lib.int32),
        "num_columns": table.COLS,
        "diagonal_index": lib.asarray(table.K, dtype=lib.int32),
        "batch_shape": list(table.BATCH),
        "output_type": "f32",
    }
    kwargs[form.param] = form.make(lib)
    plain[form.param] = form.plain
    result = eyelike.openvino.eye(**kwargs)
    if lib_name == "dask":
        result = result.compute()
    # The result is of the inputs' namespace (num_rows is one of its arrays).
    if lib_name != "dask":
        assert eyelike._backends.backend_of_array(result).name == lib_name
    assert dtype_name(result.dtype) == plain["output_type"]
    want = reference(
        tuple(plain["batch_shape"] or ()),
        plain["num_rows"],
        plain["num_columns"],
        plain["diagonal_index"],
    )
    np.testing.assert_array_equal(_value(result), want.astype(np.float64))


def _cli_cells() -> list[Any]:
    """Every backend through a pipe; NumPy through a shell's pipe too."""
    cells = [
        pytest.param(
            "pipe", lib, form, id=f"pipe-{lib}-{form.name}", marks=table.lib_marks(lib)
        )
        for lib in table.LIBS
        for form in table.CLI_FORMS
        if not form.only or lib in form.only
    ]
    cells += [
        pytest.param("shell", "numpy", form, id=f"shell-{form.name}")
        for form in table.CLI_FORMS
        if not form.only or "numpy" in form.only
    ]
    return cells


@pytest.mark.parametrize(("how", "lib_name", "form"), _cli_cells())
def test_command_line(how: str, lib_name: str, form: table.Form) -> None:
    """The printed matrix is NumPy's print of the oracle, under the header
    that names its shape, dtype and library; ``--format``'s data, read back
    by NumPy as its help says, is the oracle."""
    table.lib_or_skip(lib_name)
    words = ["3", "4", "--backend", lib_name, *form.make(None)]
    rows, cols, batch, k, dtype = form.plain
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    if how == "pipe":
        command = [sys.executable, "-m", "eyelike", *words]
    else:
        if shutil.which("sh") is None:
            pytest.skip("needs a POSIX shell")
        line = " ".join([f"'{sys.executable}'", "-m", "eyelike", *words])
        command = ["sh", "-c", f"{line} | cat"]
    done = subprocess.run(command, capture_output=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    shape = (*batch, rows, cols)
    want = reference(batch, rows, cols, k).astype(dtype or default_cli_dtype(lib_name))
    fmt = words[words.index("--format") + 1] if "--format" in words else None
    if fmt in ("npy", "npz"):
        data = np.load(io.BytesIO(done.stdout))
        got = data if fmt == "npy" else data["eye"]
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        return
    # (As text=True reads it: a newline is "\n" on every platform.)
    header, body = done.stdout.decode().replace("\r\n", "\n").split("\n", 1)
    assert f"shape {shape}" in header, header
    assert f"dtype {dtype or default_cli_dtype(lib_name)}" in header, header
    assert lib_name in header, header
    if fmt is None:
        assert body.strip() == str(want).strip()
        return
    delimiter = "," if fmt == "csv" else None
    got = np.loadtxt(io.StringIO(body), dtype=want.dtype, delimiter=delimiter)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.reshape(shape), want)


def default_cli_dtype(lib_name: str) -> str:
    return "float32" if lib_name in ("torch", "jax") else "float64"
