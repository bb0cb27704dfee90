"""``python -m benchmarks.calls``, and the straight path it shows: a common
call enters each file once, and the argument rules never call a backend
back (the pipeline asks the backend, and hands the answers to the rule)."""

from __future__ import annotations

import collections

import pytest
from benchmarks import calls

import eyelike


def test_a_small_batch_enters_each_file_once() -> None:
    found = calls.calls(lambda: eyelike.eye(3, batch_shape=4, k=1))
    entries = collections.Counter(w for w, _, caller in found if caller != w)
    assert entries
    assert max(entries.values()) == 1, entries


@pytest.mark.parametrize("name", list(calls.cases()))
def test_the_rules_never_call_a_backend(name: str) -> None:
    found = calls.calls(calls.cases()[name])
    assert any(w.startswith("_backends/") for w, _, _ in found)
    assert any(w.startswith("_validate/") for w, _, _ in found)
    back = [
        (caller, w, f)
        for w, f, caller in found
        if caller.startswith("_validate/") and w.startswith("_backends/")
    ]
    assert not back


def test_the_trace_sees_a_call_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # The check above can fail: a size rule made to call a backend's method
    # (its math.prod swapped for one) shows up as a call from _validate.
    from types import SimpleNamespace

    from eyelike._backends import DEFAULT
    from eyelike._validate import size

    monkeypatch.setattr(size, "math", SimpleNamespace(prod=DEFAULT.device_of))
    found = calls.calls(lambda: eyelike.eye(300, k=1, order="C"))  # the pipeline
    assert ("_backends/numpy.py", "device_of", "_validate/size.py") in found


def test_main_prints_each_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert calls.main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.partition(":")[0] for line in lines] == list(calls.cases())
    assert all(" calls in " in line and " entries " in line for line in lines)
