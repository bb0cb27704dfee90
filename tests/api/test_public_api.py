"""The public surface: names, signatures, docstrings."""

from __future__ import annotations

import inspect

import pytest

import eyelike


def test_all_is_sorted_and_complete() -> None:
    assert eyelike.__all__ == sorted(eyelike.__all__)
    public = {n for n in dir(eyelike) if not n.startswith("_")}
    # Submodules are public too; everything else must be listed.
    assert public - set(eyelike.__all__) <= {"onnx", "openvino"}


def test_eye_signature() -> None:
    params = inspect.signature(eyelike.eye).parameters
    kinds = {name: p.kind for name, p in params.items()}
    assert list(params) == [
        "n_rows", "n_cols", "k", "batch_shape", "dtype", "device", "xp", "out",
        "chunks", "order",
    ]  # fmt: skip
    assert kinds["n_rows"] is inspect.Parameter.POSITIONAL_ONLY
    assert kinds["n_cols"] is inspect.Parameter.POSITIONAL_ONLY
    assert all(
        kinds[n] is inspect.Parameter.KEYWORD_ONLY
        for n in ("k", "batch_shape", "dtype", "device", "xp", "out", "chunks", "order")
    )
    assert params["order"].default is None
    assert params["k"].default == 0
    assert params["batch_shape"].default == ()


def test_eye_like_signature() -> None:
    params = inspect.signature(eyelike.eye_like).parameters
    assert list(params) == ["x", "k", "dtype", "out"]
    assert params["x"].kind is inspect.Parameter.POSITIONAL_ONLY


def test_docstrings_are_numpydoc() -> None:
    for fn in (eyelike.eye, eyelike.eye_like):
        doc = inspect.getdoc(fn) or ""
        for section in ("Parameters", "Returns", "Raises", "Examples"):
            assert f"{section}\n---" in doc, (fn.__name__, section)


def test_modules_are_private() -> None:
    import pkgutil

    names = [m.name for m in pkgutil.iter_modules(eyelike.__path__)]
    assert all(n.startswith("_") or n in {"onnx", "openvino"} for n in names)


def test_readme_and_docstring_examples() -> None:
    import doctest
    from pathlib import Path

    pytest.importorskip("torch")
    readme = Path(__file__).resolve().parents[2] / "README.md"
    text = readme.read_text(encoding="utf-8")
    test = doctest.DocTestParser().get_doctest(text, {}, "README.md", str(readme), 0)
    runner = doctest.DocTestRunner()
    # The globals are kept: the README's torch.compile example leaves
    # entries of torch's compiler in them, and a cleared dict would make
    # its later cleanup fail (an unraisable KeyError in another test).
    runner.run(test, clear_globs=False)
    result = runner.summarize(verbose=False)
    assert result.failed == 0
    assert result.attempted >= 3
    from eyelike import _core, _core_like

    assert doctest.testmod(_core).failed == 0
    assert doctest.testmod(_core_like).attempted >= 1
    assert doctest.testmod(_core_like).failed == 0
