"""Fuzzing the command line (``eyelike ROWS [COLS] [-k K] ...``): random and
garbled argument lists. It must exit 0 having printed the right matrix, or
exit 2 with a usage error; never crash."""

from __future__ import annotations

import contextlib
import io
import math
import sys
from typing import Any

import numpy as np
from helpers import reference
from helpers.fuzz_checks import run_cli
from helpers.fuzz_namespaces import STANDARD, ml_dtypes
from helpers.fuzz_oracle import LIMIT, Unjudged, cli_parser, np_dtype_quietly
from helpers.fuzz_strategies import fuzz
from hypothesis import assume, given, note
from hypothesis import strategies as st

CLI_TOKENS = ["0", "1", "2", "3", "5", "-1", "-2", "99999999999999999999"]
CLI_TOKENS += [str(2**70), "1_0", " 3", "٣", "-k", "--batch-shape", "--dtype"]
CLI_TOKENS += ["--backend", "--device", "-h", "--help", "--", "numpy", "torch"]
CLI_TOKENS += ["jax", "array_api_strict", "dask", "int32", "int8", "float16"]
CLI_TOKENS += ["uint64", "bool", "complex64", "bfloat16", "foo", "O", "g"]
CLI_TOKENS += [",", "1,2", "2,3", "0,1", "1,", "-1,3", "cpu", "cuda", "", "bench"]
# (No -o: a garbled command line must not write files here.)
CLI_TOKENS += ["--format", "txt", "csv", "npy"]
CLI_DEFAULT = {"numpy": "float64", "dask": "float64", "array_api_strict": "float64"}
CLI_DEFAULT |= {"torch": "float32", "jax": "float32"}


def _parsed(argv: list[str]) -> Any:
    """The parsed command line, or None for a usage error (nothing runs)."""
    try:
        with (
            contextlib.redirect_stderr(io.StringIO()),
            contextlib.redirect_stdout(io.StringIO()),
        ):
            parsed, _ = cli_parser().parse_known_args(argv)
    except SystemExit:
        return None
    return parsed


def _np_dtype_named(name: str) -> Any:
    dt = np_dtype_quietly(name)
    if dt is None and ml_dtypes is not None and hasattr(ml_dtypes, name):
        return np.dtype(getattr(ml_dtypes, name))
    return dt


def cli_unjudged(argv: list[str]) -> Unjudged | None:
    """Why a command line is not run (too costly to), or None."""
    parsed = _parsed(argv)
    if parsed is None:
        return None
    rows = parsed.rows
    cols = rows if parsed.cols is None else parsed.cols
    dims = [*parsed.batch_shape, rows, cols]
    if any(d < 0 for d in dims) or len(dims) > 64:
        return None
    named = _np_dtype_named(parsed.dtype or CLI_DEFAULT.get(parsed.backend, "float64"))
    itemsize = named.itemsize if isinstance(named, np.dtype) else 16
    # The command line prints a Dask result, so it computes it in full.
    if parsed.backend == "dask" and math.prod(dims) * itemsize > LIMIT:
        return Unjudged("lazy_output_too_big_to_check")
    return None


def _cli_expected_text(argv: list[str]) -> str | None:
    """What a successful run must print, or None if it cannot be told."""
    parsed = _parsed(argv)
    if parsed.format is not None:
        return None  # data, not the printed view (tests/cli/test_output.py)
    dtype = _np_dtype_named(parsed.dtype or CLI_DEFAULT[parsed.backend])
    if not isinstance(dtype, np.dtype):
        return None
    if parsed.backend == "torch" and dtype.type.__module__ == "ml_dtypes":
        return None  # NumPy cannot hold torch's bfloat16: torch prints it
    rows = parsed.rows
    cols = rows if parsed.cols is None else parsed.cols
    batch = tuple(parsed.batch_shape)
    if math.prod((*batch, rows, cols)) > 1 << 12 or max((*batch, rows, cols)) > 1 << 12:
        return None
    want = reference(batch, rows, cols, parsed.k).astype(dtype)
    header = f"# shape {want.shape}, dtype {dtype.name}, {parsed.backend}"
    if dtype.type.__module__ == "ml_dtypes":
        # Printed widened, as the header says: NumPy prints these as "1 0".
        want = want.astype(np.int64 if "int" in dtype.name else np.float32)
        header += f" (values shown as {want.dtype.name})"
    # Every value: the output is not a terminal, so nothing is elided.
    with np.printoptions(threshold=sys.maxsize):
        return f"{header}\n{want}\n"


@st.composite
def cli_argv(draw: st.DrawFn) -> list[str]:
    """A command line that is mostly right, then perhaps garbled."""
    small = st.integers(-1, 5).map(str)
    argv = [draw(small)]
    if draw(st.booleans()):
        argv.append(draw(small))
    if draw(st.booleans()):
        ks = draw(st.lists(st.integers(-6, 6) | st.sampled_from([2**63, -(2**70)])))
        argv += ["-k", ",".join(map(str, ks)) if len(ks) != 1 else str(ks[0])]
    if draw(st.booleans()):
        dims = draw(st.lists(st.integers(0, 3), max_size=2))
        argv += ["--batch-shape", ",".join(map(str, dims))]
    if draw(st.booleans()):
        argv += ["--dtype", draw(st.sampled_from([*STANDARD, "float16", "foo"]))]
    if draw(st.booleans()):
        argv += ["--backend", draw(st.sampled_from(sorted(CLI_DEFAULT)))]
    for _ in range(draw(st.integers(0, 2))):  # garble it a little
        at = draw(st.integers(0, len(argv)))
        argv.insert(at, draw(st.sampled_from(CLI_TOKENS) | st.text(max_size=4)))
    return argv


@fuzz(250)
@given(
    argv=cli_argv()
    | st.lists(st.sampled_from(CLI_TOKENS) | st.text(max_size=5), max_size=8)
)
def test_cli_random_argv(argv: list[str]) -> None:
    assume(cli_unjudged(argv) is None)
    code, stdout, stderr = run_cli(argv)
    note(f"stdout: {stdout[:300]!r} stderr: {stderr[-300:]!r}")
    assert code in (0, 2), code
    if code == 2:
        assert "error" in stderr
        return
    if "-h" in argv or "--help" in argv:
        return
    want = _cli_expected_text(argv)
    if want is not None:
        assert stdout == want
