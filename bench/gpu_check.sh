#!/bin/bash
# gpu_check.sh — everything the cuda backend must pass on an NVIDIA GPU, then its speed:
# builds with every core; runs on cuda the whole differential suite (against the
# interpreter), the gradient checks, the backend's own tests and the engine's golden
# programs; compute-sanitizer over part of the differential suite where it is
# installed; then `make bench-gpu` (TL against torch eager on the same GPU). Ends with
# a summary. Usage: bash bench/gpu_check.sh [OUTDIR]  (from the repository's root)
# It needs the NVIDIA driver, NVRTC (found in the CUDA toolkit or a pip wheel, or named
# by TL_NVRTC) and, for the peer figures, a python with torch (TL_PEER_PYTHON).
set -u
OUT=${1:-build/gpu_check}
mkdir -p "$OUT"
JOBS=$(nproc)
T0=$(date +%s)
SUMMARY=()
note() { echo "== [$(($(date +%s) - T0))s] $*"; }
# a step's last "N passed, M failed" line, or what went wrong
verdict() {
  local line
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$2" | tail -1)
  [ -n "$line" ] || line="no result (exit $3): see $2"
  SUMMARY+=("$1: $line")
  echo "$1: $line"
}

if [ -z "${TL_NVRTC:-}" ]; then
  for d in /usr/local/cuda*/lib64 /usr/lib/x86_64-linux-gnu /opt /usr/local/lib /root/.local /home; do
    f=$(find "$d" -name 'libnvrtc.so*' 2>/dev/null | grep -v -E 'builtins|alt' | sort | head -1)
    [ -n "$f" ] && export TL_NVRTC=$f && break
  done
fi
if [ -z "${TL_PEER_PYTHON:-}" ]; then
  for p in python3 /opt/*/.venv/bin/python /opt/*/bin/python; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch' 2>/dev/null; then export TL_PEER_PYTHON=$(command -v "$p"); break; fi
  done
fi

note "build (-j$JOBS)"
make -j"$JOBS" all build/tests/tl_tests build/bench/bench_gpu >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
build/tl devices | tee "$OUT/devices.log"
if ! grep -q '^cuda: available' "$OUT/devices.log"; then
  echo "gpu_check: the cuda backend cannot run here (see above): nothing to check"
  exit 1
fi
export TL_TEST_JOBS=$JOBS TL_TEST_DEVICE=cuda

note "differential suite on cuda (every graph)"
TL_DIFF_FRACTION=1 timeout 180 build/tests/tl_tests diff_device >"$OUT/diff.log" 2>&1
verdict "differential suite" "$OUT/diff.log" $?
note "gradient checks on cuda"
TL_BACKEND=cuda timeout 60 build/tests/tl_tests grad_ -lang_golden >"$OUT/grad.log" 2>&1
verdict "gradient checks" "$OUT/grad.log" $?
note "backend tests and golden programs on cuda"
timeout 90 build/tests/tl_tests opencl_gemm opencl_softmax opencl_conv opencl_realize opencl_host opencl_training \
  opencl_save opencl_to_and opencl_gradient opencl_large golden_device cuda_ >"$OUT/golden.log" 2>&1
verdict "backend tests and golden programs" "$OUT/golden.log" $?
for f in diff grad golden; do grep -E '^(FAIL|  )' "$OUT/$f.log" | head -20; done

if command -v compute-sanitizer >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/compute-sanitizer ]; then
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  note "compute-sanitizer (memcheck) on two shards of the differential suite"
  TL_DIFF_FRACTION=1 TL_TEST_JOBS=1 timeout 60 "$CS" --tool memcheck --error-exitcode 3 build/tests/tl_tests diff_device_random_graphs_0 \
    diff_device_special_values_0 >"$OUT/sanitizer.log" 2>&1
  rc=$?
  SUMMARY+=("compute-sanitizer: exit $rc, $(grep -c 'Invalid\|Error' "$OUT/sanitizer.log") error lines ($(grep -E 'ERROR SUMMARY' "$OUT/sanitizer.log" | tail -1))")
else
  SUMMARY+=("compute-sanitizer: not installed here (not run)")
fi

note "make bench-gpu"
timeout 150 make -s bench-gpu 2>&1 | tee "$OUT/bench.log"
note "done"
echo "== summary ($(grep '^cuda:' "$OUT/devices.log"))"
printf '%s\n' "${SUMMARY[@]}"
grep '^bench: gpu' "$OUT/bench.log" | sed 's/^bench: //'
