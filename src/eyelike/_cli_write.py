"""The command line's output, written as its blocks come (`write`): data
(``--output FILE``, ``--format``: NumPy's ``.npy`` and ``.npz``, and text
as ``np.loadtxt`` reads it) and the printed view with every value, to a
file (atomically, after a check of its disk's room) or to standard output.

The checks here raise `Refused` (a usage error, exit 2) before anything is
written; a failure while writing is an ``OSError`` for the caller to report
(exit 1). `widened` (ml_dtypes' values in a NumPy type that shows them as
numbers) serves the terminal's view too.
"""

from __future__ import annotations

import contextlib
import errno
import io
import itertools
import math
import os
import shutil
import stat
import types
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from ._validate.dtypes import is_ml_dtype

__all__ = [
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


def check_target(path: str | None, fmt: str, stdout: IO[str]) -> None:
    """Refuse binary data to a terminal (or to a text-only stream); ``path``
    None is standard output."""
    if path is not None or fmt not in BINARY:
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


def check_values(values: np.ndarray[Any, Any], dtype: str, fmt: str | None) -> None:
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


def write(
    blocks: Iterable[np.ndarray[Any, Any]],
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    header: str,
    fmt: str | None,
    path: str | None,
    stdout: IO[str],
) -> None:
    """Write the eye of ``shape``, whose values ``blocks`` gives in order
    (NumPy arrays: whole matrices, or rows of one; ``dtype`` theirs once
    `widened`), as ``fmt`` (None: the printed view, every value) to the
    file ``path``, or to ``stdout`` where ``path`` is None: each block
    written before the next is made. Raises ``OSError`` on a failure."""
    blocks = map(widened, blocks)
    if fmt in BINARY:
        head = io.BytesIO()
        descr = np.lib.format.dtype_to_descr(dtype)
        info = {"descr": descr, "fortran_order": False, "shape": shape}
        np.lib.format.write_array_header_1_0(head, info)  # np.save's header
        size = len(head.getvalue()) + math.prod(shape) * dtype.itemsize
        # Each block's bytes, without a copy: as uint8 for the buffer protocol
        # (complex and long double have no format that zlib's crc32 takes).
        data = (np.ascontiguousarray(b).reshape(-1).view(np.uint8) for b in blocks)
        pieces: Iterator[Any] = itertools.chain([head.getvalue()], data)
    else:
        delimiter = "," if fmt == "csv" else " "
        rows = (_text(block, delimiter) for block in blocks)
        text = _view(blocks, shape, dtype) if fmt is None else rows
        pieces = (p.encode("ascii") for p in itertools.chain([header + "\n"], text))
        # Each value and its delimiter (0 and 1 as long as each other in
        # every dtype): the text's size.
        cell = len(_text(np.zeros((1, 1), dtype), " "))
        size = len(header) + 1 + math.prod(shape) * cell

    def put(f: Any) -> None:  # a binary file, or a text stream as one
        if fmt != "npz":
            for piece in pieces:
                f.write(piece)
            return
        # One entry, "eye.npy", its size unknown until written (ZIP64), in
        # an archive that np.load reads (stored, as np.savez stores it).
        with (
            zipfile.ZipFile(f, "w") as archive,
            archive.open("eye.npy", "w", force_zip64=True) as entry,
        ):
            for piece in pieces:
                entry.write(piece)

    if path is not None:
        _replace(path, put, size)
        return
    stdout.flush()
    binary = getattr(stdout, "buffer", None)
    if binary is None:  # io.StringIO: text only (check_target)
        binary = types.SimpleNamespace(write=lambda data: stdout.write(data.decode()))
    put(binary)
    stdout.flush()


def _text(values: np.ndarray[Any, Any], delimiter: str) -> str:
    """The rows of ``values`` (the last axis a row; a NumPy dtype, or one
    `widened`) as text: integers and bools as integers, floats as decimals
    that read back as the same value, complex as ``(re+imj)``."""
    if values.size == 0:
        return ""  # no values: rows of nothing would be blank lines
    if values.dtype.kind == "b":
        values = values.view(np.uint8)  # 0 and 1, as integers
    cell = _complex if values.dtype.kind == "c" else str
    rows = values.reshape(-1, values.shape[-1]).tolist()
    return "".join(delimiter.join(map(cell, row)) + "\n" for row in rows)


def _complex(value: Any) -> str:
    """``(re+imj)``, as ``np.loadtxt(..., dtype=complex)`` reads it. Each
    part as ``str`` writes a float: Python's shortest text that reads back
    as the same float64 (exact for float32's and float16's values too), or
    NumPy's shortest unique text of a long double."""
    real, imag = str(value.real), str(value.imag)
    return f"({real}{'' if imag.startswith('-') else '+'}{imag}j)"


def _view(
    blocks: Iterable[np.ndarray[Any, Any]], shape: tuple[int, ...], dtype: np.dtype[Any]
) -> Iterator[str]:
    """Every value, as ``print`` shows the whole array with no value elided
    (NumPy's brackets, its line width of 75, its blank lines between
    matrices), made row by row. The eye's values are 0 and 1: each is
    NumPy's text of that value in such an array."""
    if not math.prod(shape):
        yield "[]\n"
        return
    zero, one = np.array2string(np.array([0, 1], dtype), separator="|")[1:-1].split("|")
    depth, (n_rows, n_cols), batch = len(shape), shape[-2:], shape[:-2]
    # NumPy wraps a row where its line, indented to the row's depth, would
    # pass 75 - depth characters.
    per_line = max(1, (76 - 2 * depth) // (len(zero) + 1))
    wrap = "\n" + " " * depth
    done = 0  # rows written
    for block in blocks:
        lines = []
        for row in (block.reshape(-1, n_cols) != 0).tolist():
            matrix, at = divmod(done, n_rows)
            done += 1
            cells = [one if v else zero for v in row]
            text = wrap.join(
                " ".join(cells[i : i + per_line]) for i in range(0, n_cols, per_line)
            )
            # A matrix's first row opens it, and each batch dimension whose
            # index is 0 there; its last row closes it and those at their
            # end, then leaves one blank line a dimension closed.
            opens = 1 + _starts(matrix, batch) if at == 0 else 0
            lead = " " * (depth - 1 - opens) + "[" * opens
            tail = "\n"
            if at == n_rows - 1:
                closes = 1 + _starts(matrix + 1, batch)
                last = closes == depth - 1
                tail = "]" * closes + "\n" * (1 if last else closes + 1)
            lines.append(f"{lead}[{text}]{tail}")
        yield "".join(lines)


def _starts(matrix: int, batch: tuple[int, ...]) -> int:
    """How many of the last batch dimensions start (index 0) at the
    matrix with flat index ``matrix``."""
    return sum(matrix % math.prod(batch[i:]) == 0 for i in range(len(batch)))


def _replace(path: str, put: Callable[[IO[bytes]], None], size: int) -> None:
    """Write the file ``path`` (``size`` bytes, at least) through ``put``:
    a new file in the same folder, renamed over ``path`` when complete, so
    that a failed write leaves an existing file as it was; none made where
    the disk has less room than ``size``."""
    try:
        mode: int | None = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        # A device or a pipe (/dev/null, a FIFO): nothing to replace.
        with open(path, "wb") as f:
            put(f)
        return
    # Through symlinks, as open() goes: the file they lead to is replaced.
    target = os.path.realpath(path)
    folder, name = os.path.split(target)
    free = shutil.disk_usage(folder).free
    if size > free:
        msg = f"it needs {size:,} bytes, and its disk has {free:,} bytes free"
        raise OSError(errno.ENOSPC, msg)
    # Named first, then made (O_EXCL: never another's file): a stop at any
    # moment inside the try removes it, and only it.
    temporary = os.path.join(folder, f".{name}.{os.urandom(6).hex()}.tmp")
    # Made with the mode open() gives a new file (0666 less the umask, which
    # os.open applies), or the old file's own, never wider while written.
    made = 0o666 if mode is None else stat.S_IMODE(mode)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    try:
        with os.fdopen(os.open(temporary, flags, made), "wb") as f:
            put(f)
            f.flush()
            # On disk before the rename: a crash then leaves the old file
            # or the new one, never a renamed empty one.
            os.fsync(f.fileno())
        if mode is not None:  # exactly its mode: the umask left out
            os.chmod(temporary, stat.S_IMODE(mode))
        os.replace(temporary, target)
    except FileExistsError:
        raise  # (not made here)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
