"""``eyelike ... --output FILE`` / ``--format``: the eye as data, read back
by NumPy as a user would (``np.load``, ``np.loadtxt``), equal to
``eyelike.eye`` for the same arguments."""

from __future__ import annotations

import ast
import io
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import eyelike
from eyelike import _cli_write
from eyelike._cli import main

# Every dtype NumPy itself has that eyelike makes: all of them go in every
# format.
NUMPY_DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "float16", "float32", "float64", "longdouble", "complex64",
    "complex128", "clongdouble",
]  # fmt: skip
# ml_dtypes' types: text only (as their values), refused in .npy and .npz.
ML_DTYPES = [
    "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
    "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3",
    "int4", "uint4", "int2", "complex32",
]  # fmt: skip
# Arguments: a batch of two 3x4 matrices, one offset per matrix.
ARGS = ["3", "4", "--batch-shape", "2", "-k", "-1,2"]


def _want(dtype: Any) -> np.ndarray[Any, Any]:
    return np.asarray(eyelike.eye(3, 4, k=[-1, 2], batch_shape=(2,), dtype=dtype))


def _ml_dtype(name: str) -> Any:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    if not hasattr(ml_dtypes, name):
        pytest.skip(f"ml_dtypes {ml_dtypes.__version__} has no {name}")
    return np.dtype(getattr(ml_dtypes, name))


def _header(text: str) -> tuple[tuple[int, ...], str]:
    """The shape and the dtype that the text's ``#`` line states."""
    found = re.match(r"# shape (\(.*?\)), dtype (\w+), (\w+)\n", text)
    assert found, text[:200]
    return ast.literal_eval(found[1]), found[2]


def _read_text(path: Path, fmt: str, dtype: Any) -> np.ndarray[Any, Any]:
    """As a user reads it: np.loadtxt, then the shape the # line states."""
    shape, name = _header(path.read_text())
    assert name == np.dtype(dtype).name
    delimiter = "," if fmt == "csv" else None
    values = np.loadtxt(path, dtype=dtype, delimiter=delimiter, ndmin=2)
    return values.reshape(shape)


def _same(got: np.ndarray[Any, Any], want: np.ndarray[Any, Any]) -> None:
    """Equal values of the same dtype, bit for bit (0.0 is not -0.0)."""
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    if got.dtype.type in (np.longdouble, np.clongdouble):
        # Their padding bytes hold anything: the values and their signs.
        assert np.array_equal(got, want)
        for part in (np.real, np.imag):
            assert np.array_equal(np.signbit(part(got)), np.signbit(part(want)))
    else:
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("fmt", ["npy", "npz", "txt", "csv"])
def test_each_format_reads_back_as_eye(fmt: str, dtype: str, tmp_path: Path) -> None:
    path = tmp_path / f"eye.{fmt}"
    assert main([*ARGS, "--dtype", dtype, "-o", str(path)]) == 0
    want = _want(dtype)
    if fmt == "npy":
        got = np.load(path)
    elif fmt == "npz":
        with np.load(path) as archive:
            assert list(archive.files) == ["eye"]
            got = archive["eye"]
    else:
        got = _read_text(path, fmt, want.dtype)
    _same(got, want)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temp


@pytest.mark.parametrize("dtype", ML_DTYPES)
@pytest.mark.parametrize("fmt", ["txt", "csv"])
def test_ml_dtypes_in_text_are_their_values(
    fmt: str, dtype: str, tmp_path: Path
) -> None:
    """Text holds them as decimal numbers, read as a wider NumPy type and
    cast back exactly; the # line names the dtype."""
    dt = _ml_dtype(dtype)
    path = tmp_path / f"eye.{fmt}"
    assert main([*ARGS, "--dtype", dtype, "-o", str(path)]) == 0
    wide = np.int64 if "int" in dtype else np.complex64 if "complex" in dtype else float
    shape, name = _header(path.read_text())
    assert name == dtype
    delimiter = "," if fmt == "csv" else None
    got = np.loadtxt(path, dtype=wide, delimiter=delimiter).reshape(shape).astype(dt)
    _same(got, _want(dt))


@pytest.mark.parametrize(
    ("dtype", "line"),
    [
        ("int8", "0 0 0 0"),
        ("uint64", "0 0 0 0"),
        ("bool", "0 0 0 0"),
        ("float16", "0.0 0.0 0.0 0.0"),
        ("float64", "0.0 0.0 0.0 0.0"),
        ("complex64", "(0.0+0.0j) (0.0+0.0j) (0.0+0.0j) (0.0+0.0j)"),
    ],
)
def test_text_layout(dtype: str, line: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Integers and bools as integers, floats with a point, complex as
    np.loadtxt reads it; the header, then the batch's matrices in turn."""
    assert main([*ARGS, "--dtype", dtype, "--format", "txt"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"# shape (2, 3, 4), dtype {dtype}, numpy"
    assert len(lines) == 1 + 2 * 3
    assert lines[1] == line  # k = -1: the first row of matrix 0 is empty
    ones = [
        [i for i, v in enumerate(row.split()) if v.lstrip("(")[0] == "1"]
        for row in lines[1:]
    ]
    assert ones == [[], [0], [1], [2], [3], []]


def test_csv_layout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["2", "3", "-k", "1", "--dtype", "int32", "--format", "csv"]) == 0
    assert capsys.readouterr().out == (
        "# shape (2, 3), dtype int32, numpy\n0,1,0\n0,0,1\n"
    )


def test_floats_read_back_exactly() -> None:
    """Values other than 0 and 1 (the text writer is general): each float
    dtype's awkward values, written and read back bit for bit."""
    for dtype in [np.float16, np.float32, np.float64, np.longdouble]:
        info = np.finfo(dtype)
        values = np.array(
            [[0.1, 1 / 3, info.tiny, info.max, -info.eps, 2.0**-20]], dtype=dtype
        )
        text = _cli_write._text(values, " ")
        _same(np.loadtxt(io.StringIO(text), dtype=dtype, ndmin=2), values)
    for dtype in [np.complex64, np.complex128]:
        values = np.array([[0.1 - 1j / 3, -2.5 + 0j, 1e-30j]], dtype=dtype)
        text = _cli_write._text(values, ",")
        got = np.loadtxt(io.StringIO(text), dtype=dtype, delimiter=",", ndmin=2)
        _same(got, values)


@pytest.mark.parametrize("fmt", ["npy", "npz", "txt", "csv"])
@pytest.mark.parametrize(
    ("words", "shape"),
    [(["0"], (0, 0)), (["3", "0"], (3, 0)), (["2", "--batch-shape", "0"], (0, 2, 2))],
)
def test_empty_eyes(
    fmt: str, words: list[str], shape: tuple[int, ...], tmp_path: Path
) -> None:
    path = tmp_path / f"eye.{fmt}"
    assert main([*words, "--dtype", "int16", "-o", str(path)]) == 0
    if fmt in ("txt", "csv"):
        text = path.read_text()
        assert text.count("\n") == 1  # the header only: no blank rows
        assert _header(text) == (shape, "int16")
        return
    if fmt == "npy":
        got = np.load(path)
    else:
        with np.load(path) as archive:
            got = archive["eye"]
    _same(got, np.zeros(shape, np.int16))


@pytest.mark.parametrize("fmt", ["npy", "npz"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn", "int4"])
def test_binary_refuses_ml_dtypes(
    fmt: str, dtype: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """np.save would store them as raw bytes (np.load: dtype |V2): refused,
    and nothing written, an existing file untouched."""
    _ml_dtype(dtype)
    path = tmp_path / f"eye.{fmt}"
    path.write_bytes(b"before")
    with pytest.raises(SystemExit) as info:
        main(["3", "--dtype", dtype, "-o", str(path)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"--format {fmt} cannot record dtype {dtype}" in err
    assert "--format txt or csv" in err
    assert path.read_bytes() == b"before"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_torch_bfloat16_is_refused_in_npy_and_exact_in_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """torch's bfloat16 reaches the host widened to float32: never written
    as if it were float32."""
    pytest.importorskip("torch")
    words = ["3", "--dtype", "bfloat16", "--backend", "torch"]
    with pytest.raises(SystemExit) as info:
        main([*words, "-o", str(tmp_path / "eye.npy")])
    assert info.value.code == 2
    assert "cannot record dtype bfloat16" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
    assert main([*words, "-o", str(tmp_path / "eye.txt")]) == 0
    assert _header((tmp_path / "eye.txt").read_text())[1] == "bfloat16"
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "eye.txt"), np.eye(3))


@pytest.mark.parametrize(
    "lib", ["torch", "jax", "dask", "array_api_strict"]
)  # fmt: skip
@pytest.mark.parametrize("fmt", ["npy", "txt"])
def test_other_backends_are_copied_to_the_host(
    lib: str, fmt: str, tmp_path: Path
) -> None:
    """Each library's result through its backend's to_numpy (Dask's
    computed), with the dtype it made."""
    pytest.importorskip(lib)
    path = tmp_path / f"eye.{fmt}"
    words = [*ARGS, "--dtype", "int32", "--backend", lib, "-o", str(path)]
    assert main(words) == 0
    got = np.load(path) if fmt == "npy" else _read_text(path, fmt, np.int32)
    _same(got, _want("int32"))
    if fmt == "txt":
        assert path.read_text().splitlines()[0].endswith(f", {lib}")


def test_meta_tensor_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    with pytest.raises(SystemExit) as info:
        main(
            [
                "3",
                "--backend",
                "torch",
                "--device",
                "meta",
                "-o",
                str(tmp_path / "e.npy"),
            ]
        )
    assert info.value.code == 2
    assert "cannot be copied to the host" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["-o", "eye.dat"], "cannot tell the format of 'eye.dat' (suffix .dat)"),
        (["-o", "eye"], "(no suffix): name the file .npy, .npz, .txt or .csv"),
        (["-o", "-"], "-o - (standard output) needs a format: add --format"),
        (["--format", "xml"], "argument --format: invalid choice: 'xml'"),
    ],
)
def test_unknown_format_is_refused(
    words: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["2", *words])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_format_overrides_the_suffix(tmp_path: Path) -> None:
    path = tmp_path / "eye.data"
    assert main(["2", "--dtype", "int8", "--format", "csv", "-o", str(path)]) == 0
    assert path.read_text() == "# shape (2, 2), dtype int8, numpy\n1,0\n0,1\n"
    assert main(["2", "--format", "npy", "-o", str(tmp_path / "eye.TXT")]) == 0
    _same(np.load(tmp_path / "eye.TXT"), np.eye(2))
    assert main(["2", "-o", str(tmp_path / "upper.NPY")]) == 0  # any case
    _same(np.load(tmp_path / "upper.NPY"), np.eye(2))


def test_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for words in (["-o", str(tmp_path)], ["--format", "txt", "-o", str(tmp_path)]):
        with pytest.raises(SystemExit) as info:
            main(["2", *words])
        assert info.value.code == 2
        assert f"{str(tmp_path)!r} is a directory" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_missing_folder_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "no" / "eye.npy"
    assert main(["2", "-o", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.err == (
        f"eyelike: error: cannot write {str(path)!r}: No such file or directory\n"
    )
    assert captured.out == ""
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() == 0, reason="needs POSIX permissions"
)
def test_unwritable_folder_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    (folder / "eye.txt").write_text("before")
    folder.chmod(0o500)
    try:
        assert main(["2", "-o", str(folder / "eye.txt")]) == 1
    finally:
        folder.chmod(0o700)
    assert "Permission denied" in capsys.readouterr().err
    assert [p.name for p in folder.iterdir()] == ["eye.txt"]
    assert (folder / "eye.txt").read_text() == "before"


@pytest.mark.parametrize("fmt", ["npy", "npz", "txt"])
def test_failed_write_leaves_the_old_file(
    fmt: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A write that fails half way (a full disk): the existing file as it
    was, no temporary file left, exit 1 with the reason."""
    path = tmp_path / f"eye.{fmt}"
    path.write_bytes(b"before")
    real_open = os.fdopen

    class Full(io.BufferedWriter):
        def write(self, data: Any) -> int:
            super().write(bytes(data)[:3])
            raise OSError(28, "No space left on device")

    def fdopen(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        assert mode == "wb"
        return Full(real_open(fd, "wb", buffering=0))

    monkeypatch.setattr(_cli_write.os, "fdopen", fdopen)
    assert main(["300", "-o", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"eyelike: error: cannot write {str(path)!r}: No space left on device\n"
    )
    assert path.read_bytes() == b"before"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_permissions_are_those_open_gives(tmp_path: Path) -> None:
    """A new file gets 0666 less the umask (not mkstemp's 0600); a file
    replaced keeps its own mode, as open() leaves it."""
    old = os.umask(0o027)
    try:
        assert main(["2", "-o", str(tmp_path / "new.npy")]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.npy").stat().st_mode) == 0o640
    kept = tmp_path / "kept.txt"
    kept.write_text("before")
    kept.chmod(0o604)
    assert main(["2", "-o", str(kept)]) == 0
    assert stat.S_IMODE(kept.stat().st_mode) == 0o604
    assert kept.read_text().startswith("# shape (2, 2)")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX symlinks")
def test_symlink_target_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "data" / "eye.npy"
    target.parent.mkdir()
    target.write_bytes(b"before")
    link = tmp_path / "link.npy"
    link.symlink_to(target)
    assert main(["2", "-o", str(link)]) == 0
    assert link.is_symlink()
    _same(np.load(target), np.eye(2))


@pytest.mark.skipif(not os.path.exists(os.devnull), reason="no null device")
def test_a_device_is_written_in_place() -> None:
    """Not a regular file (/dev/null): written to, never replaced."""
    assert main(["2", "--format", "npy", "-o", os.devnull]) == 0
    assert not stat.S_ISREG(os.stat(os.devnull).st_mode)


def test_binary_to_standard_output(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main([*ARGS, "--dtype", "uint16", "--format", "npy"]) == 0
    _same(np.load(io.BytesIO(capsysbinary.readouterr().out)), _want("uint16"))
    assert main([*ARGS, "-o", "-", "--format", "npz"]) == 0
    with np.load(io.BytesIO(capsysbinary.readouterr().out)) as archive:
        _same(archive["eye"], _want(None))


@pytest.mark.parametrize("words", [["--format", "npy"], ["-o", "-", "--format", "npz"]])
def test_binary_to_a_terminal_is_refused(
    words: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    with pytest.raises(SystemExit) as info:
        main(["2", *words])
    assert info.value.code == 2
    captured = capsys.readouterr()
    assert "is binary, and standard output is a terminal" in captured.err
    assert "-o eye.np" in captured.err
    assert captured.out == ""


def test_text_to_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["2", "--dtype", "int8", "--format", "txt"]) == 0
    assert capsys.readouterr().out == "# shape (2, 2), dtype int8, numpy\n1 0\n0 1\n"


def test_printed_view_elides_only_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not a terminal: every value (a pipe's reader wants them all), with
    NumPy's options left as they were; a terminal: NumPy's summary."""
    before = np.get_printoptions()
    assert main(["40"]) == 0
    out = capsys.readouterr().out
    assert "..." not in out
    body = out.split("\n", 1)[1]  # past the header
    rows = body.replace("[", " ").replace("]", " ").split()
    np.testing.assert_array_equal(np.array(rows, float).reshape(40, 40), np.eye(40))
    assert np.get_printoptions() == before
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["40"]) == 0
    assert "..." in capsys.readouterr().out
    assert np.get_printoptions() == before


def test_help_shows_each_format(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for example in [
        'eyelike 3 -o eye.npy                     np.load("eye.npy")',
        'np.load("eye.npz")["eye"]',
        'np.loadtxt("eye.txt")',
        'np.loadtxt("eye.csv", delimiter=",")',
        'eyelike 3 --format csv | python -c ...   np.loadtxt(sys.stdin, delimiter=",")',
        "[-o FILE] [--format npy|npz|txt|csv]",
    ]:
        assert example in out


def _eyelike(*words: str) -> list[str]:
    return [sys.executable, "-m", "eyelike", *words]


@pytest.mark.parametrize("fmt", ["txt", "npy", "npz", None])
def test_closed_pipe_ends_quietly(fmt: str | None) -> None:
    """The reader stops early (``| head -c 100``): exit 141, no message, in
    each format and the printed view."""
    with subprocess.Popen(
        _eyelike("2000", *(["--format", fmt] if fmt else [])),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        proc.stdout.read(100)
        proc.stdout.close()
        err = proc.stderr.read()
        assert proc.wait(timeout=120) == 141
    assert err == b""


def test_shell_pipe_into_numpy() -> None:
    """The help's example: npy through a pipe into np.load; and text into
    np.loadtxt."""
    if shutil.which("sh") is None:
        pytest.skip("needs a POSIX shell")
    reader = (
        "import io, sys, numpy as np; a = np.load(io.BytesIO(sys.stdin.buffer"
        ".read())); a = a if hasattr(a, 'shape') else a['eye']; "
        "print(a.shape, a.dtype, int(a.sum()))"
    )
    for fmt in ("npy", "npz"):  # (npz: a ZIP64 entry, written as it comes)
        line = (
            f"'{sys.executable}' -m eyelike 3 4 --batch-shape 2 --dtype int16 "
            f"--format {fmt} | '{sys.executable}' -c \"{reader}\""
        )
        done = subprocess.run(
            ["sh", "-c", line], capture_output=True, text=True, check=True
        )
        assert done.stdout == "(2, 3, 4) int16 6\n"
    done = subprocess.run(
        _eyelike("2", "3", "-k", "1", "--format", "txt"),
        capture_output=True,
        check=True,
    )
    got = np.loadtxt(io.BytesIO(done.stdout))
    _same(got, np.eye(2, 3, k=1))


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("fmt", ["npy", "npz", "txt"])
def test_full_device_exits_1(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A real failing write (/dev/full: no space left), for each writer."""
    assert main(["100", "--format", fmt, "-o", "/dev/full"]) == 1
    assert capsys.readouterr().err == (
        "eyelike: error: cannot write '/dev/full': No space left on device\n"
    )


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_binary_to_a_real_terminal_is_refused() -> None:
    """On a pseudo-terminal: npy refused (status 2, nothing written to it),
    text written."""
    import pty

    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            _eyelike("2", "--format", "npy"),
            stdout=follower,
            stderr=subprocess.PIPE,
            timeout=120,
        )
        assert done.returncode == 2
        assert b"is binary, and standard output is a terminal" in done.stderr
        done = subprocess.run(
            _eyelike("2", "--dtype", "int8", "--format", "csv"),
            stdout=follower,
            stderr=subprocess.PIPE,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        # (The terminal turns each "\n" into "\r\n".)
        text = os.read(leader, 4096).replace(b"\r\n", b"\n")
        assert text == b"# shape (2, 2), dtype int8, numpy\n1,0\n0,1\n"
    finally:
        os.close(follower)
        os.close(leader)


def test_a_write_protected_file_is_refused_as_open_refuses_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Bug (a review of issue 44's third round): a file this user may not
    write (0444), in a folder they may, was replaced by the rename, where
    open() refuses it. Refused alike: exit 1, "Permission denied", the file
    as it was. (Root may write any file: os.access's answer for another
    user stands in.)"""
    path = tmp_path / "eye.npy"
    path.write_bytes(b"before")
    path.chmod(0o444)
    real = os.access

    def access(where: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        if os.fspath(where) == str(path) and mode == os.W_OK:
            return False
        return real(where, mode, *args, **kwargs)

    monkeypatch.setattr(_cli_write.os, "access", access)
    assert main(["2", "-o", str(path)]) == 1
    assert "Permission denied" in capsys.readouterr().err
    assert path.read_bytes() == b"before"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_long_file_name_is_written(tmp_path: Path) -> None:
    """Bug (a review of issue 44's third round): a name of 238 to 255 bytes,
    which open() takes, failed with "File name too long": the temporary
    file's name, the name and 18 more, passed the 255 bytes a name has."""
    path = tmp_path / ("a" * 251 + ".npy")
    assert main(["2", "-o", str(path)]) == 0
    _same(np.load(path), np.eye(2))
    assert [p.name for p in tmp_path.iterdir()] == [path.name]
