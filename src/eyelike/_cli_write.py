"""The command line's data output (``--output FILE``, ``--format``): NumPy's
``.npy`` and ``.npz``, and text as ``np.loadtxt`` reads it, written to a
file (atomically) or to standard output.

The checks here raise `Refused` (a usage error, exit 2) before anything is
written; a failure while writing is an ``OSError`` for the caller to report
(exit 1). `widened` (ml_dtypes' values in a NumPy type that shows them as
numbers) serves the printed view too.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from ._validate.dtypes import is_ml_dtype

__all__ = [
    "BINARY",
    "FORMATS",
    "Refused",
    "check_target",
    "check_values",
    "chosen_format",
    "widened",
    "write",
]

FORMATS = ("npy", "npz", "txt", "csv")
BINARY = ("npy", "npz")
# Text is written in pieces of about this many values, so that a large eye
# never becomes one string in memory.
_PIECE = 1 << 16


class Refused(ValueError):
    """A request the command line refuses before writing anything."""


def chosen_format(output: str | None, fmt: str | None) -> str | None:
    """The format to write: ``fmt`` if given, else the suffix of ``output``;
    None for the printed view (neither given). A directory is refused."""
    if output not in (None, "-") and os.path.isdir(output):
        msg = (
            f"{output!r} is a directory; give a file name, e.g. "
            f"{os.path.join(output, 'eye.' + (fmt or 'npy'))}"
        )
        raise Refused(msg)
    if fmt is not None or output is None:
        return fmt
    if output == "-":
        # Standard output has no name to read a format from, and no one
        # format is the obvious choice for a pipe: the reader says.
        msg = "-o - (standard output) needs a format: add --format npy, npz, txt or csv"
        raise Refused(msg)
    suffix = Path(output).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        what = f"suffix .{suffix}" if suffix else "no suffix"
        msg = (
            f"cannot tell the format of {output!r} ({what}): name the file "
            f".npy, .npz, .txt or .csv, or choose one with --format npy|npz|txt|csv"
        )
        raise Refused(msg)
    return suffix


def check_target(output: str | None, fmt: str, stdout: IO[str]) -> None:
    """Refuse binary data to a terminal (or to a text-only stream)."""
    if output not in (None, "-") or fmt not in BINARY:
        return
    if stdout.isatty():
        msg = (
            f"--format {fmt} is binary, and standard output is a terminal: "
            f"redirect it (> eye.{fmt}), pipe it, or write a file with -o eye.{fmt}"
        )
        raise Refused(msg)
    if getattr(stdout, "buffer", None) is None:  # io.StringIO, in a process
        msg = f"--format {fmt} is binary, and standard output takes text only here"
        raise Refused(msg)


def check_values(values: np.ndarray[Any, Any], dtype: str, fmt: str) -> None:
    """Refuse to write ``values`` (the result copied to the host; ``dtype``
    the result's own dtype name) in a format that cannot record its dtype."""
    if fmt not in BINARY:
        return  # text holds every value: decimal numbers, read as they are
    # ml_dtypes' types are stored as raw bytes (np.load gives dtype |V2),
    # and a type NumPy lacks (torch's bfloat16) arrives here widened: either
    # way the file would not hold the dtype asked for.
    if is_ml_dtype(values.dtype) or values.dtype.name != dtype:
        msg = (
            f"--format {fmt} cannot record dtype {dtype}: NumPy has no such "
            f"type, and np.load would read back "
            f"{'raw bytes' if is_ml_dtype(values.dtype) else values.dtype.name}. "
            f"Write text (--format txt or csv: the values as decimals), or "
            f"choose a NumPy dtype, e.g. --dtype float32"
        )
        raise Refused(msg)


def write(
    values: np.ndarray[Any, Any],
    header: str,
    fmt: str,
    output: str | None,
    stdout: IO[str],
) -> None:
    """Write ``values`` as ``fmt`` to the file ``output``, or to ``stdout``
    where ``output`` is None or ``-``. Raises ``OSError`` on a failure."""
    delimiter = "," if fmt == "csv" else " "
    if fmt in BINARY:

        def put(f: IO[bytes]) -> None:
            if fmt == "npy":
                # Through write(), not ndarray.tofile (which np.save uses on
                # a real file): tofile's failure has no errno, so a closed
                # pipe or a full disk would not say so.
                np.save(_Writer(f), values, allow_pickle=False)
            else:
                # Made in memory, then written at once: NumPy 1.26's savez
                # leaves its ZipFile open when a write fails, whose __del__
                # then raises into whatever runs next.
                archive = io.BytesIO()
                np.savez(archive, eye=values)  # np.load(file)["eye"]
                f.write(archive.getbuffer())

    else:

        def put(f: IO[bytes]) -> None:
            for piece in _text(values, header, delimiter):
                f.write(piece.encode("ascii"))

    if output in (None, "-"):
        stdout.flush()
        binary = getattr(stdout, "buffer", None)
        if binary is not None:
            put(binary)
            binary.flush()
        else:  # a text stream only (io.StringIO): text (check_target)
            for piece in _text(values, header, delimiter):
                stdout.write(piece)
            stdout.flush()
    else:
        _replace(output, put)


def widened(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``values``, with ml_dtypes' types (bfloat16, float8, int4, ...)
    widened to the NumPy type that holds the same numbers and shows them as
    numbers (int64 for the integer ones, complex64 for complex32, float32
    for the rest): for the printed view and for text. Any other dtype is
    left as it is."""
    if not is_ml_dtype(values.dtype):
        return values
    # 0 and 1 are exact in every type eyelike makes, and in the wider one
    # (complex32's imaginary part too: widened to complex64, not dropped).
    name = values.dtype.name
    wide = (
        np.int64 if "int" in name else np.complex64 if "complex" in name else np.float32
    )
    return values.astype(wide)


class _Writer:
    """A file reduced to ``write``, which NumPy writes to in pieces."""

    def __init__(self, f: IO[bytes]) -> None:
        self.write = f.write


def _text(values: np.ndarray[Any, Any], header: str, delimiter: str) -> Iterator[str]:
    """The header line, then each matrix's rows, one matrix after another:
    ``np.loadtxt`` gives them stacked, to reshape to the header's shape."""
    yield header + "\n"
    if values.size == 0:
        return  # no values: rows of nothing would be blank lines
    # ml_dtypes' values as float32's (int64's, complex64's) are the same
    # numbers, which Python formats; the header names the real dtype.
    values = widened(values)
    if values.dtype.kind == "b":
        values = values.view(np.uint8)  # 0 and 1, as integers
    cell = _complex if values.dtype.kind == "c" else str
    rows = values.reshape(-1, values.shape[-1])
    step = max(1, _PIECE // rows.shape[1])
    for start in range(0, rows.shape[0], step):
        yield "".join(
            delimiter.join(map(cell, row)) + "\n"
            for row in rows[start : start + step].tolist()
        )


def _complex(value: Any) -> str:
    """``(re+imj)``, as ``np.loadtxt(..., dtype=complex)`` reads it. Each
    part as ``str`` writes a float: Python's shortest text that reads back
    as the same float64 (exact for float32's and float16's values too), or
    NumPy's shortest unique text of a long double."""
    real, imag = str(value.real), str(value.imag)
    return f"({real}{'' if imag.startswith('-') else '+'}{imag}j)"


def _replace(output: str, put: Callable[[IO[bytes]], None]) -> None:
    """Write the file ``output`` through ``put``: a new file in the same
    folder, renamed over ``output`` when complete, so that a failed write
    leaves an existing file as it was."""
    try:
        found = os.stat(output).st_mode
    except FileNotFoundError:
        mode, regular = None, True
    else:
        mode, regular = stat.S_IMODE(found), stat.S_ISREG(found)
    if not regular:
        # A device or a pipe (/dev/null, a FIFO): nothing to replace.
        with open(output, "wb") as f:
            put(f)
        return
    # Through symlinks, as open() goes: the file they lead to is replaced.
    target = os.path.realpath(output)
    folder, name = os.path.split(target)
    if mode is None:
        # A new file: the permissions open() would give it (mkstemp's are
        # 0600); an existing one keeps its own, as open() keeps them.
        mode = 0o666 & ~_umask()
    handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "wb") as f:
            put(f)
            f.flush()
            # On disk before the rename: a crash then leaves the old file
            # or the new one, never a renamed empty one.
            os.fsync(f.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _umask() -> int:
    """The process's umask (the only way to read it is to set it, so it is
    set back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
