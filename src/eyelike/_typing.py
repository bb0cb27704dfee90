"""The types of the public signatures' overloads (`eye`, `eye_like` and the
operator adapters), for type checkers only: the modules that use them import
this one under ``TYPE_CHECKING``, and it imports no array library at run
time.

The result's type follows the input's. ``x`` gives its own type back: a
NumPy array keeps its shape type, and its dtype type unless ``dtype`` is
given (then the dtype given, where it is a NumPy type or dtype object); an
ndarray subclass gives itself, as ``np.zeros_like`` does (with ``dtype``
given, an ndarray of that dtype: no annotation can change a subclass's).
A torch tensor keeps its class, as ``torch.zeros_like`` keeps it (a
DTensor, a subclass of the caller's own), but for an ``nn.Parameter``,
which gives a plain tensor.
Another library's array subclass is typed as itself. ``out`` is returned
itself.

``xp``: a type checker gives every module the type ``types.ModuleType``, so
no plain annotation tells torch from NumPy. A module does match a Protocol
structurally (PEP 544), by the names it defines: each ``_...Module`` protocol
below asks for the array class one library's namespace holds, typed as that
class (a property: a module's class is read-only). Where a library is not
installed, its types are Any to the checker and its protocol asks only for
names; the overloads are ordered so that this loses precision (Any) and
never gives a wrong type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import cupy
    import jax
    import numpy as np
    import torch

ArrayT = TypeVar("ArrayT")
OutT = TypeVar("OutT")
ShapeT = TypeVar("ShapeT", bound=tuple[int, ...])
DTypeT = TypeVar("DTypeT", bound="np.dtype[Any]")
ScalarT = TypeVar("ScalarT", bound="np.generic")
# An ndarray or a subclass, kept whole (np.zeros_like keeps a subclass).
NDArrayT = TypeVar("NDArrayT", bound="np.ndarray[Any, Any]")


class Shaped(Protocol):
    """An array, to `eyelike.openvino.eye` (whose inputs may also be ints)."""

    @property
    def shape(self) -> object: ...


ShapedT = TypeVar("ShapedT", bound=Shaped)


class AnyModule(Protocol):
    """A value typed only as ``types.ModuleType`` (what
    ``array_api_compat.array_namespace`` returns): the stub gives it every
    attribute, as Any, through ``ModuleType.__getattr__``, so it would match
    the first protocol below. An actual module is not given that
    ``__getattr__``, and none has this name: this catches exactly those, to
    be checked first, as Any."""

    @property
    def _eyelike_no_module_has_this(self) -> Any: ...


class NumPyModule(Protocol):
    """NumPy (and a namespace of NumPy arrays, as array-api-compat's)."""

    @property
    def ndarray(self) -> type[np.ndarray[Any, Any]]: ...


class TorchModule(Protocol):
    @property
    def Tensor(self) -> type[torch.Tensor]: ...


class CuPyModule(Protocol):
    """CuPy, which ships no type information today: its module is Any to a
    type checker, and ``xp=cupy`` gives Any. ``asnumpy`` (CuPy's own) keeps
    JAX's module out where CuPy's ``ndarray`` is Any; JAX's protocol comes
    after this one, as it asks for less."""

    @property
    def ndarray(self) -> type[cupy.ndarray]: ...
    @property
    def asnumpy(self) -> object: ...


class JaxModule(Protocol):
    """``jax.numpy``; after NumPy's and CuPy's: where JAX is not installed,
    its ``ndarray`` is Any, which their modules would match."""

    @property
    def ndarray(self) -> type[jax.Array]: ...


class Parameter(Protocol):
    """A ``torch.nn.Parameter`` (whose ``zeros_like`` is a plain tensor),
    known by its class; and by ``grad_fn``, as `Tensor` is, so that where
    torch is not installed (its Parameter Any) no other array matches."""

    @property
    def grad_fn(self) -> object: ...
    # (Narrower than object's __class__, which is the point: mypy reports
    # that, where torch's types are known.)
    @property  # type: ignore[misc, unused-ignore]
    def __class__(self) -> type[torch.nn.Parameter]: ...  # type: ignore[override, unused-ignore]


class Tensor(Protocol):
    """A torch tensor, known by a member only torch's tensors have: where
    torch is not installed ``torch.Tensor`` is Any, and an overload taking
    it would take every other library's array too (and give Any)."""

    @property
    def grad_fn(self) -> object: ...
