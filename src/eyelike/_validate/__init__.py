"""The rules every argument is checked against, once, before a backend
builds anything (``docs/internals.rst``: each rule's home)."""
