"""The command line: ``eyelike ROWS [COLS] [-k K] [--batch-shape 2,3] ...``.

`main` makes the eye, then prints it or writes it. Its arguments (the
parser, the help text, the device ``--device`` names): ``_cli_args.py``;
its ``--output`` files and formats: ``_cli_write.py``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np

from . import _backends as _registry
from . import _cli_write as _write
from ._cli_args import LIBRARIES, named_device
from ._cli_args import parser as _parser  # the name the docs' --help page imports
from ._core import eye
from ._validate.dtypes import dtype_name

__all__ = ["main"]

# Exit status where the output's reader closed it early.
_BROKEN_PIPE = 128 + 13


def _header(result: Any) -> tuple[str, str, Any]:
    """The header line (shape, dtype, library), the dtype's name and the
    result's backend."""
    backend = _registry.backend_of_array(result, "result")
    dtype = dtype_name(result.dtype) or str(result.dtype)
    shape = tuple(int(d) for d in result.shape)
    return f"# shape {shape}, dtype {dtype}, {backend.name}", dtype, backend


def _show(result: Any, whole: bool = False) -> str:
    """A header line (shape, dtype, library), then the values as NumPy
    prints them, or as their own library does where NumPy cannot hold them
    (meta tensors, shapes NumPy cannot make). ``whole``: every value, none
    elided with ``...`` (for a reader other than a person at a terminal)."""
    header, dtype, backend = _header(result)
    try:
        # Widened where NumPy would print ml_dtypes' values without a
        # decimal point: a float8 eye would read as ``1 0 0``, like an
        # integer one.
        values = _write.widened(backend.to_numpy(result))
    except Exception:  # any conversion failure: show it natively
        return f"{header}\n{result}"
    if values.dtype.name != dtype:
        header += f" (values shown as {values.dtype.name})"
    # Locally: the command line must not change NumPy's options for good.
    with np.printoptions(threshold=sys.maxsize) if whole else nullcontext():
        return f"{header}\n{values}"


def _write_out(
    parser: argparse.ArgumentParser, result: Any, fmt: str, output: str | None
) -> None:
    """Write ``result`` as ``fmt`` (a refusal is a usage error, before
    anything is written); an ``OSError`` is the write's failure."""
    header, dtype, backend = _header(result)
    try:
        values = backend.to_numpy(result)
    except Exception as exc:  # a meta tensor: no values anywhere
        parser.error(
            f"cannot write the result: its values cannot be copied to the host "
            f"({type(exc).__name__}: {exc})"
        )
    try:
        _write.check_values(values, dtype, fmt)
    except _write.Refused as exc:
        parser.error(str(exc))
    _write.write(values, header, fmt, output, sys.stdout)


def _quiet_stdout() -> None:
    """Send what is left for stdout to devnull: Python's own flush at exit
    would fail again on a closed or failing stdout."""
    try:
        fileno = sys.stdout.fileno()
    except (OSError, ValueError):  # not a file (io.StringIO): nothing to do
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success; 141 (128 + SIGPIPE, as a tool that signal stops)
        where the reader of the output closed it early, without a message.
        A usage error prints the usage and one
        ``eyelike: error: ...`` line naming the argument, and exits with
        status 2 (``SystemExit``).
    """
    words = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if words[:1] == ["bench"]:
        # It was a subcommand before the benchmark left the package.
        parser.error(
            "the benchmark is not part of the installed package: from a "
            "checkout of eyelike, run nox -s bench (or python -m benchmarks)"
        )
    args = parser.parse_args(words)
    try:
        fmt = _write.chosen_format(args.output, args.format)
        if fmt is not None:
            _write.check_target(args.output, fmt, sys.stdout)
    except _write.Refused as exc:
        parser.error(str(exc))
    try:
        xp = importlib.import_module(LIBRARIES[args.backend])
    except ImportError as exc:
        parser.error(f"backend {args.backend} is not installed ({exc})")
    # A GPU library without a usable device is the API's ValueError below,
    # in the same words (`no_usable_device`): nothing to check first here.
    try:
        result = eye(
            args.rows,
            args.cols,
            k=args.k,
            batch_shape=tuple(args.batch_shape),
            dtype=args.dtype,
            device=named_device(xp, args.backend, args.device),
            xp=xp,
        )
    except (TypeError, ValueError, MemoryError) as exc:
        parser.error(str(exc))
    to_stdout = args.output in (None, "-")
    try:
        if fmt is None:
            print(_show(result, whole=not sys.stdout.isatty()), flush=True)
        else:
            _write_out(parser, result, fmt, args.output)
    except OSError as exc:
        if to_stdout:
            _quiet_stdout()
        if to_stdout and isinstance(exc, BrokenPipeError):
            # The reader closed early (``eyelike 3 | head -1``): quietly, as
            # a command-line tool stopped by SIGPIPE, with its status.
            return _BROKEN_PIPE
        # No traceback: the reason is the system's (no such folder, no
        # space left, no permission).
        where = "standard output" if to_stdout else repr(args.output)
        # The system's reason, not the temporary file's name that it holds.
        reason = exc.strerror or str(exc)
        print(f"eyelike: error: cannot write {where}: {reason}", file=sys.stderr)
        return 1
    return 0
