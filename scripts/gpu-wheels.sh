#!/usr/bin/env bash
# Download, here (where pip reaches PyPI), the wheels that scripts/gpu-check.sh
# installs on the lent GPU machine, which has no network. Run from anywhere:
#   bash scripts/gpu-wheels.sh          # fills .whl/ at the repository root
# then name ".whl" in the run's carry list (.whl/ is git-ignored).
#
# The machine (Python 3.12) lacks array-api-compat (eyelike needs it) and
# dask, partd and locket (the Dask-with-CuPy test). dask's other needs are on
# it already; their wheels come too, small, as a fallback: gpu-check.sh
# installs a carried wheel only where its distribution is missing, so none
# shadows the machine's own copy. About 3 MiB in all (the carry limit is 64).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/.whl"
python=${PYTHON:-python3}
rm -rf "$dest"
mkdir -p "$dest"
# pyyaml is the one compiled wheel: the machine's platform, CPython 3.12.
"$python" -m pip download --quiet --no-deps --only-binary=:all: \
  --python-version 3.12 --implementation cp --abi cp312 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d "$dest" \
  array-api-compat dask partd locket \
  toolz cloudpickle fsspec click packaging pyyaml
ls -l "$dest"
du -sh "$dest"
