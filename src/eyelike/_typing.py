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
structurally (PEP 544), by the names it defines: each ``...Module`` protocol
below asks for the array class one library's namespace holds (a property:
a module's class is read-only), and but for NumPy's it is generic in that
class, which the overload returns: the type is read from the caller's
module, never named here. So no signature holds a library that may be
missing where the checker runs: mypy reads a missing one's types as Any,
pyright as Unknown, which its strict mode reports at every use of the
function ("partially unknown"). The same for a tensor's plain class
(`Parameter`, `Tensor`: what its ``detach`` returns). The overloads are
ordered so that a library the checker cannot see loses precision (Any) and
never gives a wrong type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import numpy as np
    import torch

ArrayT = TypeVar("ArrayT")
OutT = TypeVar("OutT")
ShapeT = TypeVar("ShapeT", bound=tuple[int, ...])
DTypeT = TypeVar("DTypeT", bound="np.dtype[Any]")
ScalarT = TypeVar("ScalarT", bound="np.generic")
# An ndarray or a subclass, kept whole (np.zeros_like keeps a subclass).
NDArrayT = TypeVar("NDArrayT", bound="np.ndarray[Any, Any]")
# A namespace's array class, read from the namespace (or a tensor's plain
# class, from the tensor): never named here, so that a library the checker
# cannot see leaves no unknown type in a signature.
ArrayT_co = TypeVar("ArrayT_co", covariant=True)


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


class NoArray(Protocol):
    """What no value is (no array, no int): an overload taking (and
    returning) it is chosen only for an argument of unknown type, which
    every overload takes. Its result, unlike any other's, keeps the call's
    unknown to pyright as to mypy (pyright takes the first overload's where
    the others' results are unknown, as a type read from that argument is)."""

    @property
    def _eyelike_no_value_has_this(self) -> Any: ...


class NumPyModule(Protocol):
    """NumPy (and a namespace of NumPy arrays, as array-api-compat's)."""

    @property
    def ndarray(self) -> type[np.ndarray[Any, Any]]: ...


class CuPyModule(Protocol[ArrayT_co]):
    """CuPy, known by ``asnumpy`` (NumPy has none): its ``ndarray`` class,
    which CuPy ships no type information for (Any to mypy, Unknown to
    pyright, as the caller's own ``cupy.ndarray`` is). Before NumPy's
    protocol, which an unknown ``ndarray`` would match."""

    @property
    def ndarray(self) -> type[ArrayT_co]: ...
    @property
    def asnumpy(self) -> object: ...


class TorchModule(Protocol[ArrayT_co]):
    """torch: its ``Tensor`` class."""

    @property
    def Tensor(self) -> type[ArrayT_co]: ...


class NdarrayModule(Protocol[ArrayT_co]):
    """Another namespace whose array class is its ``ndarray``: ``jax.numpy``
    (``jax.Array``). After NumPy's protocol, which asks for more."""

    @property
    def ndarray(self) -> type[ArrayT_co]: ...


class Parameter(Protocol[ArrayT_co]):
    """A ``torch.nn.Parameter`` (whose ``zeros_like`` is a plain tensor),
    known by its class; and by ``grad_fn``, as `Tensor` is, so that where
    torch is not installed (its Parameter Any) no other array matches. The
    plain tensor's type: what its ``detach`` returns. (A protocol's members
    are not part of a signature's type: torch's missing Parameter here
    leaves none unknown.)"""

    @property
    def grad_fn(self) -> object: ...
    # (Narrower than object's __class__, which is the point: mypy reports
    # that, where torch's types are known.)
    @property  # type: ignore[misc, unused-ignore]
    def __class__(self) -> type[torch.nn.Parameter]: ...  # type: ignore[override, unused-ignore]
    def detach(self) -> ArrayT_co: ...


class Tensor(Protocol[ArrayT_co]):
    """A torch tensor, known by a member only torch's tensors have (an
    overload taking any array would take every other library's too), typed
    by what its ``detach`` returns: a plain tensor."""

    @property
    def grad_fn(self) -> object: ...
    def detach(self) -> ArrayT_co: ...
