#!/usr/bin/env bash
# The one prepared GPU run (issue 3): GPU tests, then the GPU benchmark.
# Run from the repository root on a machine with a CUDA device and CuPy.
# Results (device, date, command, numbers) land in $OUT (default gpu-results/).
#
# On the lent H200 (no network, no array-api-compat there), carry the one
# pure-Python wheel it lacks, from this machine first:
#   echo /.whl/ >> .git/info/exclude
#   python3 -m pip download --no-deps -d .whl array-api-compat
# then run:  bash scripts/gpu-check.sh   (with carry: [".whl"])
set -uo pipefail
out=${OUT:-gpu-results}
mkdir -p "$out"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__)"
} 2>&1 | tee "$out/env.txt"
timeout 300 python3 -m pytest -p no:cacheprovider -m gpu -rs -q \
  tests/test_cupy.py tests/test_dask.py tests/test_threads.py 2>&1 | tee "$out/gpu-tests.txt"
timeout 240 python3 -m eyelike bench --backend cupy --json "$out/gpu-bench.json" \
  2>&1 | tee "$out/gpu-bench.txt"
