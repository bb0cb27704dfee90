"""The shape of the code, held by tests: the front end imports no backend
module and tests no library's types; the backend contract is ten public
names, which no backend adds to, and every hook beneath them is documented
where it is defined; a backend is had from the registry only,
one instance per library; and no module of eyelike imports itself back.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import numpy as np
import pytest

from eyelike import _backends
from eyelike._backends import (
    BACKENDS,
    DEFAULT,
    backend_of_array,
    backend_of_namespace,
)
from eyelike._backends._base import Backend
from eyelike._backends.generic import GenericBackend

SRC = Path(__file__).resolve().parents[2] / "src" / "eyelike"
FRONT_END = ("_core.py", "_core_like.py", "_pipeline.py")
CONTRACT = {
    "name",
    "namespaces",
    "takes",
    "device",
    "device_of",
    "shape_of",
    "dtype",
    "to_numpy",
    "short_eye",
    "eye",
}


def _public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


def test_the_contract_is_ten_names() -> None:
    assert _public(Backend) == CONTRACT


@pytest.mark.parametrize("cls", [*BACKENDS, GenericBackend], ids=lambda c: c.name)
def test_no_backend_adds_a_public_name(cls: type[Backend]) -> None:
    assert _public(cls) == CONTRACT


@pytest.mark.parametrize("cls", BACKENDS, ids=lambda c: c.name)
def test_each_backend_declares_its_three(cls: type[Backend]) -> None:
    declared = vars(cls)
    assert {"name", "namespaces", "takes"} <= set(declared)
    assert cls.namespaces
    assert cls.takes <= {"out", "order", "chunks"}


def test_each_hook_is_documented_where_it_is_defined() -> None:
    # A method by its docstring; a class attribute by the string after it.
    tree = ast.parse((SRC / "_backends" / "_base.py").read_text(encoding="utf-8"))
    backend = next(
        n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Backend"
    )
    documented, body = set(), backend.body
    for i, node in enumerate(body):
        if isinstance(node, ast.FunctionDef) and ast.get_docstring(node):
            documented.add(node.name)
        after = body[i + 1] if i + 1 < len(body) else None
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            documented.add(ast.unparse(node.target))
    hooks = {
        n
        for n in vars(Backend)
        if n.startswith("_") and not n.startswith("__") and n != "_from_table"
    }
    assert hooks
    assert hooks | CONTRACT <= documented | {"__init__", "__repr__"}


def test_hooks_are_overridden_in_kind() -> None:
    # A constant stays a class attribute, a method a method, in every backend.
    for cls in (*BACKENDS, GenericBackend):
        for name, value in vars(Backend).items():
            if name.startswith("__") or name not in vars(cls):
                continue
            assert callable(value) == callable(vars(cls)[name]), (cls.name, name)


def _runtime_imports(tree: ast.Module) -> list[str]:
    """The modules a file imports when it runs (not for type checkers),
    relative ones written as they are (``._backends``)."""
    found = []
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append("." * node.level + (node.module or ""))
    return found


@pytest.mark.parametrize("name", FRONT_END)
def test_the_front_end_imports_no_backend_module(name: str) -> None:
    tree = ast.parse((SRC / name).read_text(encoding="utf-8"))
    allowed = ("__future__", "typing", "._backends", "._pipeline", "._validate")
    for module in _runtime_imports(tree):
        assert module.startswith(allowed), module
        # The registry and the contract; never a library's module.
        if module.startswith("._backends"):
            assert module in ("._backends", "._backends._base"), module


@pytest.mark.parametrize("name", FRONT_END)
def test_the_front_end_tests_no_librarys_types(name: str) -> None:
    tree = ast.parse((SRC / name).read_text(encoding="utf-8"))
    builtin = {"int", "str", "tuple", "list", "bool", "float", "type"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in (
            "isinstance",
            "issubclass",
        ):
            classes = node.args[1]
            names = classes.elts if isinstance(classes, ast.Tuple) else [classes]
            for cls in names:
                assert ast.unparse(cls) in builtin, ast.unparse(node)
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.Is):
            left = node.left
            if isinstance(left, ast.Call) and ast.unparse(left.func) == "type":
                right = ast.unparse(node.comparators[0])
                assert right in builtin, ast.unparse(node)


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports_of(path: Path) -> set[str]:
    """Every eyelike module ``path`` imports, at the top or inside a function."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            target = f"{base}.{node.module}" if node.module else base
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if (SRC.parent / sub.replace(".", "/")).exists()
                          or (SRC.parent / (sub.replace(".", "/") + ".py")).exists()
                          else target)  # fmt: skip
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("eyelike")}
    found.discard(name)
    return found


def _cycle(graph: dict[str, set[str]]) -> tuple[str, ...] | None:
    """An import cycle of ``graph`` (module -> what it imports), if any."""
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> tuple[str, ...] | None:
        if module in path:
            return (*path, module)
        if module in done:
            return None
        for dep in sorted(graph.get(module, ())):
            found = visit(dep, (*path, module))
            if found:
                return found
        done.add(module)
        return None

    for module in sorted(graph):
        found = visit(module, ())
        if found:
            return found
    return None


# Each library eyelike has a backend for, and the files allowed to import it.
_LIBRARY_HOMES = {
    "torch": "_backends/torch/",
    "cupy": "_backends/cupy/",
    "dask": "_backends/dask/",
    "cubed": "_backends/cubed/",
    "jax": "_backends/jax/",
    "array_api_strict": "_backends/array_api_strict.py",
}


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: p.name)
def test_a_library_is_imported_by_its_own_backend_only(path: Path) -> None:
    where = path.relative_to(SRC).as_posix()
    for module in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
        library = module.partition(".")[0]
        if library in _LIBRARY_HOMES:
            assert where.startswith(_LIBRARY_HOMES[library]), (where, module)


def test_no_import_cycles() -> None:
    graph = {_module_name(p): _imports_of(p) for p in SRC.rglob("*.py")}
    assert _cycle(graph) is None
    # The walk saw the imports, lazy ones included.
    assert {"eyelike._backends.torch", "eyelike._validate.text"} <= graph[
        "eyelike._backends"
    ]
    assert "eyelike._backends.cupy" in graph["eyelike._backends.dask"]
    # Layers: the argument rules know no backend, the backends no front end.
    for module, deps in graph.items():
        if module.startswith("eyelike._validate"):
            assert not {d for d in deps if d.startswith("eyelike._backends")}, module
        if module.startswith("eyelike._backends"):
            assert not deps & {
                "eyelike._core",
                "eyelike._core_like",
                "eyelike._pipeline",
            }, module
    # And the search finds a cycle where there is one.
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ("a", "b", "c", "a")


def test_one_instance_per_library_whatever_names_it() -> None:
    import array_api_compat.numpy
    import array_api_strict

    assert backend_of_namespace(None) is DEFAULT
    assert backend_of_namespace(np) is DEFAULT
    assert backend_of_namespace(array_api_compat.numpy) is DEFAULT
    assert backend_of_array(np.zeros(2)) is DEFAULT
    strict = backend_of_namespace(array_api_strict)
    assert backend_of_array(array_api_strict.zeros(2)) is strict
    assert backend_of_namespace(array_api_strict) is strict


def test_torch_is_known_without_a_table() -> None:
    torch = pytest.importorskip("torch")
    import array_api_compat.torch

    torch_backend = importlib.import_module("eyelike._backends.torch").TORCH
    assert backend_of_namespace(torch) is torch_backend
    assert backend_of_namespace(array_api_compat.torch) is torch_backend
    assert backend_of_array(torch.zeros(2)) is torch_backend
    assert backend_of_array(torch.nn.Parameter(torch.zeros(2))) is torch_backend
    assert torch.Tensor not in _backends._BY_ARRAY_TYPE
    assert torch.nn.Parameter not in _backends._BY_ARRAY_TYPE


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: p.name)
def test_backends_are_made_in_the_registry_only(path: Path) -> None:
    # One way to get a backend: the registry's lookups (torch's and NumPy's
    # instances, made at import, are the registry's too).
    made_in = {"_backends/__init__.py", "_backends/torch/__init__.py"}
    where = path.relative_to(SRC).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("Backend"):
            assert where in made_in, ast.unparse(node)


def test_one_instance_per_generic_namespace_however_many() -> None:
    """Bug: past 64 namespaces the generic path's instances were no longer
    kept, so a namespace's own per-matrix k (or out) counted as another
    library's, and was refused."""
    import types

    import array_api_strict

    for i in range(80):
        xp = types.ModuleType(f"eyelike_test_namespace_{i}")
        xp.__array_namespace_info__ = array_api_strict.__array_namespace_info__  # type: ignore[attr-defined]
        first = backend_of_namespace(xp)
        assert isinstance(first, GenericBackend)
        assert backend_of_namespace(xp) is first
        assert first.name == xp.__name__
