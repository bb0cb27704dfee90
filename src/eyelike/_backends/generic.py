"""Any other Array API namespace: the contract's defaults, named after it."""

from __future__ import annotations

from types import ModuleType

from ._base import Backend

__all__ = ["GenericBackend"]


class GenericBackend(Backend):
    """A namespace eyelike has no module for, used through the standard only.

    ``out=`` is filled by item assignment; its outputs count as off the
    host (no memory check), since nothing tells where its devices are.
    """

    def __init__(self, xp: ModuleType) -> None:
        super().__init__(xp)
        self.name = str(getattr(xp, "__name__", "array_api"))
