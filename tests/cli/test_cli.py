"""The command line, in process and as ``python -m eyelike``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from eyelike._cli import main


def _matrix(text: str) -> np.ndarray:  # type: ignore[type-arg]
    """The printed values, every matrix's rows stacked; the header skipped."""
    rows = [
        [float(v) for v in line.replace("[", " ").replace("]", " ").split()]
        for line in text.splitlines()
        if line.strip(" []") and not line.startswith("#")
    ]
    return np.array(rows)


def _header(text: str) -> str:
    return text.splitlines()[0]


def test_batched_eye(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["3", "4", "-k", "1", "--batch-shape", "2", "--dtype", "int32"])
    assert code == 0
    got = _matrix(capsys.readouterr().out)
    np.testing.assert_array_equal(got, np.vstack([np.eye(3, 4, k=1)] * 2))


def test_per_matrix_k_and_backend(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("array_api_strict")
    code = main(
        ["2", "-k", "0,1", "--batch-shape", "2", "--dtype", "int8",
         "--backend", "array_api_strict"]
    )  # fmt: skip
    assert code == 0
    got = _matrix(capsys.readouterr().out)
    np.testing.assert_array_equal(got, np.vstack([np.eye(2), np.eye(2, k=1)]))


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["-3"], "n_rows"),
        (["3", "--dtype", "foo"], "foo"),
        (["3", "-k", "x"], "-k"),
        (["3", "--batch-shape", "2,-1"], "batch_shape[1]"),
        (["3", "--backend", "nope"], "--backend"),
        (["3.5"], "ROWS"),
        ([], "ROWS"),
        # An empty entry is an error naming the option and the entry, never
        # skipped (2,,3 once read as 2,3).
        (["3", "--batch-shape", "2,,3"], "--batch-shape: entry 2 of '2,,3' is empty"),
        (["3", "--batch-shape", ",2"], "--batch-shape: entry 1 of ',2' is empty"),
        (["3", "--batch-shape", "2, ,3"], "entry 2 of '2, ,3' is empty"),
        (["3", "-k", "1,,2", "--batch-shape", "3"], "-k: entry 2 of '1,,2' is empty"),
        (["3", "-k", "-1,"], "-k: entry 2 of '-1,' is empty"),
        (["3", "-k", ""], "-k: expected an integer"),
        (["3", "-k", "1,x"], "-k: entry 2 of '1,x' is 'x', not an integer"),
        (["3", "--batch-shape", "-1,2"], "batch_shape[0]"),
    ],
)
def test_bad_arguments_exit_2(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert words in err
    assert "Traceback" not in err


def test_header_states_shape_dtype_and_library(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["3", "4", "-k", "1", "--batch-shape", "2", "--dtype", "int32"]) == 0
    out = capsys.readouterr().out
    assert _header(out) == "# shape (2, 3, 4), dtype int32, numpy"


@pytest.mark.parametrize(
    "argv",
    [
        ["3", "-k", "-1,2", "--batch-shape", "2"],  # as the usage shows
        ["3", "-k=-1,2", "--batch-shape", "2"],
        ["3", "-k-1,2", "--batch-shape", "2"],
        ["3", "--batch-shape", "2", "-k", "-1,2"],
        ["3", "-k", " -1, 2", "--batch-shape", "2"],
    ],
)
def test_negative_per_matrix_offsets(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert _header(out) == "# shape (2, 3, 3), dtype float64, numpy"
    np.testing.assert_array_equal(
        _matrix(out), np.vstack([np.eye(3, k=-1), np.eye(3, k=2)])
    )


def test_negative_offset_and_negative_rows(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["2", "3", "-k", "-1"]) == 0
    np.testing.assert_array_equal(_matrix(capsys.readouterr().out), np.eye(2, 3, -1))


def test_empty_batch_shape_is_one_matrix(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["2", "--batch-shape", ""]) == 0
    assert _header(capsys.readouterr().out) == "# shape (2, 2), dtype float64, numpy"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import eyelike

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"eyelike {eyelike.__version__}\n"


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2", "bfloat16"])
def test_ml_dtypes_print_as_numbers(
    dtype: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ml_dtypes")
    assert main(["3", "-k", "1", "--dtype", dtype]) == 0
    out = capsys.readouterr().out
    assert _header(out) == (
        f"# shape (3, 3), dtype {dtype}, numpy (values shown as float32)"
    )
    # "1." and "0.", not "1 0 0": NumPy prints ml_dtypes values like ints.
    assert out.splitlines()[1] == "[[0. 1. 0.]"
    np.testing.assert_array_equal(_matrix(out), np.eye(3, k=1))


def test_int4_prints_as_int(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ml_dtypes")
    assert main(["2", "--dtype", "int4"]) == 0
    out = capsys.readouterr().out
    assert _header(out) == "# shape (2, 2), dtype int4, numpy (values shown as int64)"
    assert out.splitlines()[1:] == ["[[1 0]", " [0 1]]"]


@pytest.mark.filterwarnings("error")
def test_complex32_keeps_its_imaginary_part(capsys: pytest.CaptureFixture[str]) -> None:
    """Bug: ml_dtypes' complex32 was printed widened to float32, dropping the
    imaginary part with a ComplexWarning."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    if not hasattr(ml_dtypes, "complex32"):
        pytest.skip(f"ml_dtypes {ml_dtypes.__version__} has no complex32")
    assert main(["2", "--dtype", "complex32"]) == 0
    out = capsys.readouterr().out
    assert _header(out) == (
        "# shape (2, 2), dtype complex32, numpy (values shown as complex64)"
    )
    assert out.splitlines()[1:] == ["[[1.+0.j 0.+0.j]", " [0.+0.j 1.+0.j]]"]


@pytest.mark.parametrize("name", ["device1", "CPU_DEVICE", "no_x64"])
def test_array_api_strict_device_names(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bug: --device device1 with array_api_strict failed ("device 'device1'
    is not one of (... Device('device1') ...)"): the CLI takes each
    namespace's own device names."""
    s = pytest.importorskip("array_api_strict")
    try:
        s.Device(name)
    except ValueError:  # no_x64 is newer than array-api-strict 2.3
        pytest.skip(f"array-api-strict {s.__version__} has no device {name!r}")
    assert main(["2", "--backend", "array_api_strict", "--device", name]) == 0
    out = capsys.readouterr().out
    assert _header(out).startswith("# shape (2, 2), dtype ")
    np.testing.assert_array_equal(_matrix(out), np.eye(2))


def test_unknown_device_name_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("array_api_strict")
    with pytest.raises(SystemExit) as info:
        main(["2", "--backend", "array_api_strict", "--device", "device9"])
    assert info.value.code == 2
    assert "device 'device9' is not one of" in capsys.readouterr().err


def test_torch_bfloat16(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    assert main(["2", "--dtype", "bfloat16", "--backend", "torch"]) == 0
    out = capsys.readouterr().out
    assert _header(out) == (
        "# shape (2, 2), dtype bfloat16, torch (values shown as float32)"
    )
    assert out.splitlines()[1:] == ["[[1. 0.]", " [0. 1.]]"]


def test_help_is_plain_text_and_shows_negative_offsets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: eyelike ROWS [COLS] [-k K | -k K1,K2,...]")
    assert "eyelike 3 -k -1,2 --batch-shape 2" in out
    assert "--version" in out
    assert "`" not in out


def test_python_dash_m() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "eyelike", "2", "--dtype", "int8"],
        capture_output=True,
        text=True,
        check=True,
    )
    np.testing.assert_array_equal(_matrix(done.stdout), np.eye(2))


def test_bench_is_not_a_subcommand_of_the_installed_cli(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The benchmark left the package: ``eyelike bench`` says where it is."""
    with pytest.raises(SystemExit) as info:
        main(["bench", "--quick"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "the benchmark is not part of the installed package" in err
    assert "nox -s bench" in err
