"""Running a fuzzed call on the pretend 64 MiB machine and checking what it
did against the oracle's verdict: the right eye (namespace, shape, dtype,
values), or an allowed error naming the culprit, and never a warning."""

from __future__ import annotations

import contextlib
import io
import math
import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from hypothesis import currently_in_test_context, note

from . import reference, to_numpy
from .fuzz_namespaces import dtype_name, kind_of, module_prefix, torch
from .fuzz_oracle import (
    BOOM,
    LIMIT,
    MAYBE,
    Bad,
    MaybeNamed,
    Unjudged,
    cli_main,
    pretend_memory,
)
from .fuzz_oracle_outputs import Expect
from .fuzz_strategies import Boom

ALLOWED = (TypeError, ValueError, MemoryError)


def _large_reference(
    batch: tuple[int, ...], n_rows: int, n_cols: int, ks: Any
) -> np.ndarray[Any, Any]:
    """``col - row == k``, each k first moved (in Python ints) into
    ``[-n_rows - 1, n_cols + 1]``: an offset outside the matrix stays outside,
    and the comparison then fits int64. For outputs too big for ``reference``.
    """
    k_obj = np.empty(batch, dtype=object)
    k_obj[...] = ks if isinstance(ks, int) else np.asarray(ks, dtype=object)
    moved = [min(max(int(v), -n_rows - 1), n_cols + 1) for v in k_obj.ravel()]
    kk = np.array(moved, dtype=np.int64).reshape(batch)
    diff = np.arange(n_cols)[None, :] - np.arange(n_rows)[:, None]
    same: np.ndarray[Any, Any] = diff == kk[..., None, None]
    return same


def _values(result: Any) -> np.ndarray[Any, Any]:
    """Any backend's array as complex128 (ml_dtypes' complex types too)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        if isinstance(result, np.ndarray) and result.dtype.type.__module__ == (
            "ml_dtypes"
        ):
            wide = np.complex64 if "complex" in result.dtype.name else np.float32
            return result.astype(wide).astype(np.complex128)
        return to_numpy(result).astype(np.complex128)


def check_result(result: Any, expected: Expect) -> None:
    """``result`` is the rule's eye: namespace, shape, dtype and values."""
    shape, dtype = expected.shape, expected.dtype
    module = type(result).__module__
    assert module.startswith(module_prefix(expected.ns)), type(result)
    assert tuple(result.shape) == shape, (tuple(result.shape), shape)
    if isinstance(dtype, np.dtype):
        assert result.dtype == dtype, (result.dtype, dtype)
    elif dtype != MAYBE:
        assert dtype_name(result.dtype) == dtype, (result.dtype, dtype)
    if expected.ns == "numpy":
        assert result.flags.writeable
    if math.prod(shape) == 0 or str(expected.device) == "meta":
        return  # no values to compare (and dims may be huge)
    batch, (n_rows, n_cols) = shape[:-2], shape[-2:]
    got = _values(result)
    if math.prod(shape) <= 1 << 12:
        want = reference(batch, n_rows, n_cols, expected.ks)
    else:  # up to the 64 MiB limit: the same rule, vectorised
        want = _large_reference(batch, n_rows, n_cols, expected.ks)
    np.testing.assert_array_equal(got, want)


def outcome(call: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    """Run ``call`` on the pretend machine: its result, or the allowed
    exception it raised.

    Any other exception propagates and fails the test: a crash found; so
    does any warning.
    """
    with warnings.catch_warnings(record=True) as caught, pretend_memory(LIMIT):
        warnings.simplefilter("always")
        try:
            result, exc = call(), None
        except (*ALLOWED, Boom) as error:
            result, exc = None, error
    assert not caught, [f"{w.category.__name__}: {w.message}" for w in caught]
    return result, exc


def names(name: str, message: str) -> bool:
    """Whether ``message`` has ``name`` as a word (``k`` is not in "mask")."""
    pattern = rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])"
    return re.search(pattern, message) is not None


def expect_failure(exc: BaseException | None, verdicts: Sequence[Any]) -> None:
    """``exc`` is one of the failures ``verdicts`` allow, naming the culprit."""
    bads = [v for v in verdicts if isinstance(v, Bad)]
    maybes = [v for v in verdicts if isinstance(v, MaybeNamed)]
    booms = [v for v in verdicts if isinstance(v, str) and v == BOOM]
    assert exc is not None, f"no error; expected one of {verdicts}"
    if isinstance(exc, Boom):
        assert booms, f"the caller's Boom escaped unexpectedly: {exc}"
        return
    message = str(exc)
    assert message.strip(), f"empty message from {type(exc).__name__}"
    types_ok = {t for b in bads for t in b.types} | ({TypeError} if maybes else set())
    wanted = {n for b in bads for n in b.names} | {m.name for m in maybes}
    assert isinstance(exc, tuple(types_ok)), (type(exc), verdicts, message)
    assert any(names(n, message) for n in wanted), (wanted, message)


def check_outcome(expected: Any, result: Any, exc: BaseException | None) -> None:
    """The outcome of a call is what the oracle's verdict allows."""
    if isinstance(expected, Expect):
        if exc is not None:
            assert expected.may_fail, f"unexpected {type(exc).__name__}: {exc}"
            expect_failure(exc, expected.may_fail)
            return
        check_result(result, expected)
        return
    expect_failure(exc, [expected])


def check_general_contract(call: Callable[[], Any]) -> tuple[Any, Any]:
    """For an input the oracle cannot judge exactly: a result, an allowed
    error with a message, or the caller's own ``Boom``; no crash, no warning.
    Returns ``(result, exception)``."""
    result, exc = outcome(call)
    if exc is not None and not isinstance(exc, Boom):
        assert str(exc).strip(), f"empty message from {type(exc).__name__}"
    return result, exc


def run_and_check(call: Callable[[], Any], expected: Any) -> tuple[Any, Any]:
    """Run ``call`` and check it against the verdict ``expected`` (only the
    general contract for an ``Unjudged`` one); returns ``(result, exception)``."""
    if currently_in_test_context():
        note(f"expected: {expected!r}")
    if isinstance(expected, Unjudged):
        return check_general_contract(call)
    result, exc = outcome(call)
    check_outcome(expected, result, exc)
    return result, exc


def snapshot(a: Any) -> bytes:
    """The bytes of any backend's array (bit patterns, NaN payloads too)."""
    if kind_of(a) == "torch":
        if a.numel() == 0:
            return b""
        flat = a.detach().reshape(-1).clone().contiguous()
        return bytes(flat.view(torch.uint8).numpy())
    if kind_of(a) == "numpy":
        return bytes(a.tobytes())
    if kind_of(a) in ("jax", "array_api_strict"):
        return to_numpy(a).tobytes()
    return repr(a).encode()


def run_cli(argv: list[str]) -> tuple[Any, str, str]:
    """Run the command line on the pretend machine: its exit code (from a
    return or a ``SystemExit``), what it printed and what it reported."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with (
        pretend_memory(LIMIT),
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
    ):
        try:
            code: Any = cli_main(argv)
        except SystemExit as exit_:
            code = exit_.code
    return code, stdout.getvalue(), stderr.getvalue()
