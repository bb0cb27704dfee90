"""eyelike's benchmarks: a development tool, not part of the installed
package. Run ``nox -s bench`` or ``python -m benchmarks --help`` from the
repository's top folder."""
