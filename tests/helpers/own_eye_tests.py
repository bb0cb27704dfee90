"""A pytest plugin that runs a library's own tests of its ``eye`` with
eyelike making each eye (``-p own_eye_tests``, the library named by
``EYELIKE_OWN_TESTS``): its ``eye`` is replaced, where it is defined and in
its namespace, by one that reads the call's arguments by the library's own
signature and hands them to ``eyelike.eye(..., xp=<that namespace>)``.

A call with a keyword eyelike does not have (cubed's ``spec``) goes to the
library's own ``eye``, and is counted apart: the summary line
``eyelike made N eyes; the library's own eye M`` says how many went
where. eyelike's own build may call the namespace's ``eye`` for one
matrix: that call, inside eyelike, is the library's.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import threading
from typing import Any

import pytest

import eyelike

# Which namespaces' eye the plugin replaces, per library.
_NAMESPACES = {
    "sparse": ("sparse",),
    "cubed": ("cubed", "cubed.array_api"),
    "array_api_strict": ("array_api_strict",),
}
_STANDARD = ("k", "dtype", "device")
_inside = threading.local()
_counts = {"eyelike": 0, "own": 0}


def through_eyelike(own: Any, xp: Any) -> Any:
    """``own`` (a namespace's ``eye``), with the eye made by eyelike."""
    signature = inspect.signature(own)
    counts = list(signature.parameters)[:2]

    @functools.wraps(own)
    def eye(*args: Any, **kwargs: Any) -> Any:
        if getattr(_inside, "active", False):
            return own(*args, **kwargs)
        given = dict(signature.bind(*args, **kwargs).arguments)
        sizes = [given.pop(name, None) for name in counts]
        standard = {name: given.pop(name) for name in _STANDARD if name in given}
        if given:  # a keyword of the library's own
            _counts["own"] += 1
            return own(*args, **kwargs)
        _counts["eyelike"] += 1
        _inside.active = True
        try:
            return eyelike.eye(*sizes, xp=xp, **standard)
        finally:
            _inside.active = False

    return eye


def _replace(module: Any, xp: Any) -> None:
    own = module.eye
    patched = through_eyelike(own, xp)
    module.eye = patched
    home = importlib.import_module(own.__module__)
    if getattr(home, "eye", None) is own:
        home.eye = patched


def pytest_configure(config: pytest.Config) -> None:
    library = os.environ["EYELIKE_OWN_TESTS"]
    if library == "marray":
        marray = importlib.import_module("marray")
        make = marray.masked_namespace

        @functools.wraps(make)
        def masked_namespace(xp: Any) -> Any:
            namespace = make(xp)
            namespace.eye = through_eyelike(namespace.eye, namespace)
            return namespace

        marray.masked_namespace = masked_namespace
        return
    for name in _NAMESPACES[library]:
        module = importlib.import_module(name)
        _replace(module, module)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    made, own = _counts["eyelike"], _counts["own"]
    terminalreporter.write_line(
        f"eyelike made {made} eyes; the library's own eye {own}"
    )
