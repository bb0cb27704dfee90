"""The command line streams: every output made and written block by block
(`eyelike._cli.BLOCK` values at most, or one row), each the same as the
whole written at once; outputs larger than the machine's memory; a write
that cannot fit the disk refused first; SIGINT and SIGTERM stop it cleanly."""

from __future__ import annotations

import io
import os
import signal
import stat
import subprocess
import sys
import time
import tracemalloc
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import eyelike
from eyelike import _cli, _cli_write
from eyelike._cli import main
from eyelike._validate import size as _size

# (rows, cols, batch, k): wrapped rows, one matrix in many blocks, many
# matrices in a block, a batch of rank 2, one offset per matrix, one row.
CASES = [
    ("3", "40", "2", "1"),
    ("30", "7", "", "-2"),
    ("4", "4", "3,2", "0,1"),
    ("1", "5", "2,1,3", "4"),
    ("6", "1", "2", "-1,0"),
]


def _words(case: tuple[str, ...]) -> list[str]:
    rows, cols, batch, k = case
    return [rows, cols, "--batch-shape", batch, "-k", k]


def _want(case: tuple[str, ...], dtype: str) -> np.ndarray[Any, Any]:
    rows, cols, batch, k = case
    offsets = [int(v) for v in k.split(",")]
    return eyelike.eye(
        int(rows),
        int(cols),
        k=offsets[0] if len(offsets) == 1 else offsets,
        batch_shape=tuple(int(v) for v in batch.split(",") if v),
        dtype=dtype,
    )


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of at most 8 values (so a block is some rows of a matrix, or
    a few whole ones), and standard output taken for a pipe (streamed)."""
    monkeypatch.setattr(_cli, "BLOCK", 8)
    monkeypatch.setattr(_cli, "_has_fd", lambda: True)


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("dtype", ["float64", "bool", "int8", "complex64", "float16"])
@pytest.mark.parametrize("case", CASES)
def test_streamed_view_is_numpys_whole_print(
    case: tuple[str, ...], dtype: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*_words(case), "--dtype", dtype]) == 0
    want = _want(case, dtype)
    with np.printoptions(threshold=sys.maxsize):
        text = f"# shape {want.shape}, dtype {dtype}, numpy\n{want}\n"
    assert capsys.readouterr().out == text


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("dtype", ["float32", "bool", "uint16", "complex128"])
@pytest.mark.parametrize("case", CASES)
def test_streamed_files_are_the_whole_written_at_once(
    case: tuple[str, ...], dtype: str, tmp_path: Path
) -> None:
    """``.npy``: np.save's bytes; ``.npz``: what np.load reads; text: the
    rows of the whole."""
    want = _want(case, dtype)
    saved = io.BytesIO()
    np.save(saved, want)
    for fmt in ("npy", "npz", "txt", "csv"):
        path = tmp_path / f"eye.{fmt}"
        assert main([*_words(case), "--dtype", dtype, "-o", str(path)]) == 0
        if fmt == "npy":
            assert path.read_bytes() == saved.getvalue()
        elif fmt == "npz":
            with np.load(path) as archive:
                assert archive["eye"].tobytes() == want.tobytes()
        else:
            header = f"# shape {want.shape}, dtype {dtype}, numpy\n"
            rows = _cli_write._text(want, "," if fmt == "csv" else " ")
            assert path.read_text() == header + rows


@pytest.mark.parametrize("fmt", ["npy", "npz", "txt", "csv"])
def test_an_output_larger_than_memory(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a pretend machine of 256 KiB, a 2 MiB eye is refused whole, and
    written block by block, read back exactly (``.npy`` memory-mapped)."""
    monkeypatch.setattr(_size, "physical_memory", lambda: 256 << 10)
    monkeypatch.setattr(_cli, "BLOCK", 1 << 10)
    with pytest.raises(MemoryError):
        eyelike.eye(512, batch_shape=2, k=[0, 3])
    path = tmp_path / f"eye.{fmt}"
    words = ["512", "--batch-shape", "2", "-k", "0,3", "-o", str(path)]
    assert main(words) == 0
    if fmt == "npy":
        got = np.load(path, mmap_mode="r")
    elif fmt == "npz":
        with np.load(path) as archive:
            got = archive["eye"]
    else:
        delimiter = "," if fmt == "csv" else None
        got = np.loadtxt(path, delimiter=delimiter).reshape(2, 512, 512)
    monkeypatch.undo()
    assert np.array_equal(got, eyelike.eye(512, batch_shape=2, k=[0, 3]))


@pytest.mark.parametrize("fmt", ["npy", "npz", "txt", None])
def test_memory_is_bounded_by_a_block(
    fmt: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An 8 MiB eye made and written in blocks of 128 KiB: never more than
    2 MiB held at once (NumPy's arrays and Python's objects, as tracemalloc
    counts them), whatever the format, to a file or a pipe."""
    monkeypatch.setattr(_cli, "BLOCK", 1 << 14)
    monkeypatch.setattr(_cli, "_has_fd", lambda: True)
    path = tmp_path / "eye.out"
    words = ["1024"] + (["--format", fmt, "-o", str(path)] if fmt else [])
    with path.open("w") as sink:
        monkeypatch.setattr(sys, "stdout", sink)  # the view: to a file
        tracemalloc.start()
        try:
            assert main(words) == 0
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 2 << 20, peak
    assert path.stat().st_size > 2 << 20


@pytest.mark.parametrize("fmt", ["npy", "npz", "txt", "csv"])
def test_a_write_the_disk_cannot_hold_is_refused_first(
    fmt: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The file's size is known before it is written (exactly, but for the
    archive's directory): with a byte less free, no temporary file is made,
    the old file is kept, and one line says why (exit 1); with it free,
    the file is written."""
    path = tmp_path / f"eye.{fmt}"
    words = ["70", "3", "--batch-shape", "2", "--dtype", "int16", "-o", str(path)]
    assert main(words) == 0
    size = path.stat().st_size
    need = size
    if fmt == "npz":  # its .npy, with no directory
        saved = io.BytesIO()
        np.save(saved, eyelike.eye(70, 3, batch_shape=2, dtype="int16"))
        need = len(saved.getvalue())
    path.write_bytes(b"before")
    free = [need - 1]

    def disk_usage(folder: str) -> Any:
        assert Path(folder) == tmp_path
        return types.SimpleNamespace(free=free[0])

    monkeypatch.setattr(_cli_write.shutil, "disk_usage", disk_usage)
    made: list[str] = []
    real_open = os.open

    def os_open(file: str, *args: Any, **kwargs: Any) -> Any:
        made.append(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(_cli_write.os, "open", os_open)
    assert main(words) == 1
    err = capsys.readouterr().err
    assert err == (
        f"eyelike: error: cannot write {str(path)!r}: it needs {need:,} bytes, "
        f"and its disk has {need - 1:,} bytes free\n"
    )
    assert made == []
    assert path.read_bytes() == b"before"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]
    free[0] = need
    assert main(words) == 0
    assert path.stat().st_size == size


def _eyelike(*words: str) -> list[str]:
    return [sys.executable, "-m", "eyelike", *words]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("written", [0, 16 << 20])
@pytest.mark.parametrize("suffix", ["npy", "npz"])
def test_a_signal_stops_it_cleanly(
    sig: signal.Signals, written: int, suffix: str, tmp_path: Path
) -> None:
    """A real signal while a 1 GiB file is written (as soon as the
    temporary file is there, or once it holds 16 MiB): the temporary file
    removed, the old file and its mode kept, 128 + the signal, one line."""
    path = tmp_path / f"b.{suffix}"
    path.write_bytes(b"before")
    path.chmod(0o640)
    with subprocess.Popen(
        _eyelike("2048", "--batch-shape", "32", "-o", str(path)),
        stderr=subprocess.PIPE,
    ) as proc:
        deadline = time.monotonic() + 60
        while not [p for p in tmp_path.glob(".b.*.tmp") if p.stat().st_size >= written]:
            assert proc.poll() is None, "ended before the signal"
            assert time.monotonic() < deadline
            time.sleep(0.001)
        proc.send_signal(sig)
        assert proc.stderr is not None
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 128 + sig
    assert err == f"eyelike: stopped by {sig.name}; {str(path)!r} not written\n"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]
    assert path.read_bytes() == b"before"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
