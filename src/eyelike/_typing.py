"""The types of the public signatures' overloads (`eye`, `eye_like` and the
operator adapters), for type checkers only: imported under
``TYPE_CHECKING``, and importing no array library at run time.

The result's type follows the input's. ``x`` gives its own type back, as
``np.zeros_like`` and ``torch.zeros_like`` do (a NumPy array its shape
type, and its dtype type unless ``dtype`` is given; an ``nn.Parameter`` a
plain tensor); ``out`` is returned itself.

``xp``: a type checker types every module ``types.ModuleType``, but a
module matches a Protocol structurally (PEP 544) by the names it defines:
each ``...Module`` protocol below asks for one library's array class (a
property: a module's class is read-only) and, but for NumPy's, is generic
in it, so the overload returns the class read from the caller's module,
never named here. No signature then holds a library that may be missing
where the checker runs (mypy reads it as Any, pyright as Unknown, which
its strict mode reports at every use); the overloads are ordered so that a
library the checker cannot see loses precision (Any), never a wrong type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypedDict, TypeVar

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
# class, from the tensor), never named here.
ArrayT_co = TypeVar("ArrayT_co", covariant=True)


class EyeKeywords(TypedDict, total=False):
    """The keywords every overload of `eye` takes, typed as its own
    signature types them: only ``dtype``, ``xp`` and ``out`` pick the result."""

    k: Any
    batch_shape: Any
    device: Any
    chunks: Any
    order: Any


class Shaped(Protocol):
    """An array, to `eyelike.openvino.eye` (whose inputs may also be ints)."""

    @property
    def shape(self) -> object: ...


ShapedT = TypeVar("ShapedT", bound=Shaped)


class NoArray(Protocol):
    """What no value is: an overload taking it is chosen only for an argument
    of unknown type, whose result it keeps unknown to pyright as to mypy
    (pyright would take the first overload's); or for a module typed only as
    ``types.ModuleType`` (as ``array_namespace`` returns), whose stub's
    ``__getattr__`` would match every protocol below (so: first)."""

    @property
    def _eyelike_no_value_has_this(self) -> Any: ...


class NumPyModule(Protocol):
    """NumPy (and a namespace of NumPy arrays, as array-api-compat's)."""

    @property
    def ndarray(self) -> type[np.ndarray[Any, Any]]: ...


class NdarrayModule(Protocol[ArrayT_co]):
    """Another namespace whose array class is its ``ndarray``: ``jax.numpy``
    (``jax.Array``). After NumPy's protocol, which asks for more."""

    @property
    def ndarray(self) -> type[ArrayT_co]: ...


class CuPyModule(NdarrayModule[ArrayT_co], Protocol[ArrayT_co]):
    """CuPy, known by ``asnumpy`` (NumPy has none): its untyped ``ndarray``
    class. Before NumPy's protocol, which an unknown ``ndarray`` would match."""

    @property
    def asnumpy(self) -> object: ...


class TorchModule(Protocol[ArrayT_co]):
    """torch: its ``Tensor`` class."""

    @property
    def Tensor(self) -> type[ArrayT_co]: ...


class Tensor(Protocol[ArrayT_co]):
    """A torch tensor, known by a member only torch's tensors have, typed by
    what its ``detach`` returns: a plain tensor."""

    @property
    def grad_fn(self) -> object: ...
    def detach(self) -> ArrayT_co: ...


class Parameter(Tensor[ArrayT_co], Protocol[ArrayT_co]):
    """A ``torch.nn.Parameter`` (whose ``zeros_like`` is a plain tensor: what
    its ``detach`` returns), known by its class; and as a `Tensor`, so that
    without torch (its Parameter Any) no other array matches. (A protocol's
    members are no part of a signature's type.)"""

    # (Narrower than object's __class__, which is the point: mypy reports
    # that, where torch's types are known.)
    @property  # type: ignore[misc, unused-ignore]
    def __class__(self) -> type[torch.nn.Parameter]: ...  # type: ignore[override, unused-ignore]
