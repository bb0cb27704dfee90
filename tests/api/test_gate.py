"""The one gate for the short paths (``eyelike._validate.gate``), held against
the rules it stands for: whatever it admits, the general path's own rule
functions accept unchanged (the counts, the batch shape, the rank, the size
and memory, ``k`` clamped as the pipeline clamps it, a per-matrix ``k``'s
shape), and the common calls it must admit, it admits.

The short paths themselves are compared with the general path, call by
call, in ``test_short_path.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from helpers.fuzz_strategies import fuzz, hostile
from hypothesis import given
from hypothesis import strategies as st

import eyelike
from eyelike._backends import BACKENDS
from eyelike._validate import gate
from eyelike._validate import size as _size
from eyelike._validate.gate import admit, admit_offsets, admit_traced
from eyelike._validate.integers import MAX_BATCH_DIMS, batch_shape, dimension
from eyelike._validate.offsets import check_broadcast, host_offsets

# Mostly plain ints (so the gate admits a good share), with the edges of
# each rule: zero, negative, bool, NumPy's ints, huge, and hostile objects.
entries = (
    st.integers(1, 40)
    | st.integers(-2, 2)
    | st.sampled_from([True, False, np.int64(3), 2**63, 2**64, 1 << 40])
    | hostile("n_rows")
)
shapes = st.lists(entries, min_size=0, max_size=6).map(tuple) | st.just((1,) * 65)
offsets = (
    st.integers(-100, 100)
    | st.integers()
    | st.sampled_from([True, 2**70])
    | (hostile("k"))
)
WIDEST_ITEM = 16  # complex128's


def _pipeline_k(k: int, n_rows: int, n_cols: int) -> int:
    """``k`` as the general path's rule clamps one scalar offset."""
    return host_offsets(k, (), (-n_rows, n_cols))  # type: ignore[return-value]


@fuzz(600)
@given(shape=shapes, k=offsets)
def test_what_the_gate_admits_the_rules_accept_unchanged(shape: Any, k: Any) -> None:
    settled = admit(shape, k)
    if settled is None:
        return
    # The counts and the batch: each the general path's rule's value, as is.
    *batch, n_rows, n_cols = shape
    assert dimension(n_rows, "n_rows") == n_rows
    assert type(n_rows) is int
    assert dimension(n_cols, "n_cols") == n_cols
    assert type(n_cols) is int
    assert batch_shape(tuple(batch)) == tuple(batch)
    assert all(type(d) is int for d in batch)
    # The rank, the one empty-output policy, and the size in any dtype with
    # any backend's scratch beside it.
    assert len(shape) <= MAX_BATCH_DIMS + 2
    assert 0 not in shape
    n = math.prod(shape)
    nbytes = _size.checked_bytes(shape, WIDEST_ITEM)
    assert nbytes is not None
    scratch = max(b._scratch for b in BACKENDS) * (n + 8 * n_rows * n_cols)
    # (Up to FITS_ANYWHERE elements: at most 1 MiB, on any machine.)
    memory = _size.physical_memory() if n > gate.FITS_ANYWHERE else 1 << 20
    assert nbytes + scratch <= memory
    # k: one int, clamped as the general path clamps it; anything else (one
    # offset per matrix) only with a batch, handed on as it is.
    if type(k) is int:
        assert settled == _pipeline_k(k, n_rows, n_cols)
        assert type(settled) is int
    else:
        assert settled is k
        assert batch


@fuzz(600)
@given(shape=shapes, k=offsets)
def test_the_traced_gate_answers_as_the_gate(shape: Any, k: Any) -> None:
    """`admit_traced`, the gate torch.compile traces (no comparison of ``k``
    or of the size that could become a guard), answers every call as
    `admit` does: the same int, the same object, or None; but an int ``k``
    past int64 it leaves to the general path (which clamps it by numbers
    before any size, traced, meets it: inductor refused the constant)."""
    want, got = admit(shape, k), admit_traced(shape, k)
    if type(k) is int and not -(2**63 - 1) <= k <= 2**63 - 1:
        assert got is None
        return
    if want is None or type(want) is int:
        assert type(got) is type(want)
        assert got == want
    else:
        assert got is want


@fuzz(300)
@given(
    shape=st.lists(st.integers(1, 30), min_size=2, max_size=5).map(tuple),
    k=st.integers(),
)
def test_the_gate_admits_every_plain_call_that_fits(shape: Any, k: int) -> None:
    """Plain positive ints within the rank and memory, and an int ``k``: the
    common calls, which the short paths exist for, are never turned away."""
    settled = admit(shape, k)
    assert settled == _pipeline_k(k, shape[-2], shape[-1])


def test_the_rank_limit_is_the_general_paths() -> None:
    assert gate.MAX_DIMS == MAX_BATCH_DIMS + 2 == 64
    for gate_of in (admit, admit_traced):
        assert gate_of((1,) * gate.MAX_DIMS, 0) == 0
        assert gate_of((1,) * (gate.MAX_DIMS + 1), 0) is None
    batch_shape((1,) * (gate.MAX_DIMS - 2))  # the general path's limit too
    with pytest.raises(ValueError, match="dimensions"):
        batch_shape((1,) * (gate.MAX_DIMS - 1))


@pytest.mark.parametrize("rank", [2, 3, 4])
def test_the_size_bound_is_the_documented_one(
    rank: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`admit` writes its bounds as numbers (each module constant read is a
    guard of a compiled program): they are the documented constants. Up to
    `FITS_ANYWHERE` elements no machine's memory is read; beyond, an output
    is admitted while `BYTES_PER_ELEMENT` bytes an element fit memory."""
    assert gate.FITS_ANYWHERE * gate.BYTES_PER_ELEMENT == 1 << 20
    assert WIDEST_ITEM + 9 * max(b._scratch for b in BACKENDS) <= gate.BYTES_PER_ELEMENT

    def shape_of(n: int) -> tuple[int, ...]:
        return (*(1,) * (rank - 2), 1, n)

    def no_machine() -> int:
        msg = "memory read for an output that fits anywhere"
        raise AssertionError(msg)

    monkeypatch.setattr(_size, "physical_memory", no_machine)
    assert admit(shape_of(gate.FITS_ANYWHERE), 0) == 0
    memory = 1 << 22
    monkeypatch.setattr(_size, "physical_memory", lambda: memory)
    fits = memory // gate.BYTES_PER_ELEMENT
    assert admit(shape_of(gate.FITS_ANYWHERE + 1), 0) == 0
    assert admit(shape_of(fits), 0) == 0
    assert admit(shape_of(fits + 1), 0) is None


@pytest.mark.parametrize("lib", ["numpy", "torch", "array_api_strict"])
@pytest.mark.parametrize("n", [1, 300])
def test_every_short_path_keeps_the_rank_limit(lib: str, n: int) -> None:
    """Bug (found in review, when each short path had its own limit):
    torch's took 63 batch dimensions, which the general path refuses."""
    xp = pytest.importorskip(lib)
    with pytest.raises(ValueError, match="63 dimensions"):
        eyelike.eye(n, batch_shape=(1,) * 63, xp=xp)
    if lib != "torch" and np.lib.NumpyVersion(np.__version__) < "2.0.0":
        return  # NumPy 1 holds 32 dimensions (its own error beyond)
    assert eyelike.eye(n, batch_shape=(1,) * 62, xp=xp).ndim == 64


def test_empty_outputs_take_the_general_path() -> None:
    for shape in [(0, 3), (3, 0), (0, 0), (0, 3, 3), (2, 0, 3), (2, 3, 0)]:
        assert admit(shape, 0) is None


def test_k_is_clamped_into_the_matrix() -> None:
    assert admit((3, 5), 2**70) == 5
    assert admit((3, 5), -(2**70)) == -3
    assert admit((2, 3, 5), 7) == 5
    assert admit((2, 3, 5), -4) == -3
    assert admit((3, 5), -3) == -3
    assert admit((3, 5), 5) == 5


def test_one_offset_per_matrix_needs_a_batch() -> None:
    k = np.array([0, 1])
    assert admit((2, 3, 3), k) is k
    assert admit((3, 3), k) is None
    assert admit((3, 3), [0]) is None
    assert admit((3, 3), True) is None  # a bool: the general path refuses it


@fuzz(300)
@given(
    batch=st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple),
    k_shape=st.lists(st.integers(0, 4), min_size=0, max_size=5).map(tuple),
)
def test_admit_offsets_is_the_broadcast_rule(
    batch: tuple[int, ...], k_shape: tuple[int, ...]
) -> None:
    """What `admit_offsets` admits, the general path's rule for ``k``'s
    shape accepts; what it refuses (but a 0-d ``k``, the scalar rule's),
    that rule refuses too."""
    shape = (*batch, 3, 3)
    try:
        check_broadcast(k_shape, batch)
        accepted = True
    except ValueError:
        accepted = False
    assert admit_offsets(shape, k_shape) == (accepted and len(k_shape) > 0)


def test_the_traced_gate_bounds_memory_as_the_gate() -> None:
    """`admit_traced` reads this machine's memory once (one guard of a
    compiled program, not five) and bounds it as `admit` does."""
    assert _size.physical_memory() == gate._MEMORY
    fits = gate._MEMORY // gate.BYTES_PER_ELEMENT
    for gate_of in (admit, admit_traced):
        assert gate_of((1, fits), 0) == 0
        assert gate_of((1, fits + 1), 0) is None
