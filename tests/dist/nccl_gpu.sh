#!/bin/sh
# nccl_gpu.sh BUILD — NCCL on the cuda backend (issue 28 item 5), for a machine with 2
# or more NVIDIA GPUs, OpenMPI and libnccl.so.2: not part of `make test-dist`, which
# runs where there is no GPU: `make test-dist-nccl` builds and runs it. Each case
# checks values worked out independently (dist_check's closed forms, numpy's
# mlp_ref.py and cnn_ref.py) and, with DIST_CHECK_WAY, that every payload went by
# NCCL (or, with TL_DIST_NCCL=0 or a rank without NCCL, through host memory).
# About a minute. Ends with "N passed, N failed"; exits 1 if any failed.
set -u
B=${1:-build}
D=$(dirname "$0")
PY=${PY:-python3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_DEBUG=${NCCL_DEBUG:-WARN}
pass=0
fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
  fail=$((fail + 1))
  echo "FAIL $1"
  cat "$T/out" "$T/err" 2>/dev/null | grep -v '^--*$' | head -20 | sed 's/^/     /'
}
mp() {
  np=$1
  shift
  timeout 120 mpirun --oversubscribe -np "$np" "$@" >"$T/out" 2>"$T/err"
  rc=$?
}
expect() { if [ $rc -eq 0 ] && [ "$(cat "$T/out")" = "$want" ]; then ok "$1"; else bad "$1 (status $rc)"; fi; }

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "GPUs: $gpus; $("$B/tl" devices 2>&1 | grep '^cuda')"
"$B/tl" devices 2>&1 | grep -q '^cuda: available' || { echo "the cuda backend is not available here"; exit 1; }
command -v mpirun >/dev/null || { echo "no mpirun"; exit 1; }
$PY -c 'import ctypes; ctypes.CDLL("libnccl.so.2")' || { echo "libnccl.so.2 does not load"; exit 1; }

if [ "$gpus" -ge 2 ]; then
  for np in 2 $([ "$gpus" -ge 4 ] && echo 4); do
    # every dtype, rank 0-4 tensors, broadcast from N-1, the mean, a transposed view
    for c in collectives grads; do
      mp $np env TL_BACKEND=cuda DIST_CHECK_WAY=nccl "$B/tests/dist_check" $c
      want="ok $c"
      expect "np $np, cuda: $c by NCCL"
    done
    # tiny buckets: gradients packed on the device at offsets, or sent directly
    for mb in 0.00007 0.0002; do
      mp $np env TL_BACKEND=cuda DIST_CHECK_WAY=nccl TL_DIST_BUCKET_MB=$mb "$B/tests/dist_check" grads
      want="ok grads"
      expect "np $np, cuda: grads in $mb MiB buckets by NCCL"
    done
    mp $np env TL_BACKEND=cuda DIST_CHECK_WAY=nccl "$B/tests/dist_check" mlp "$T/mlp$np.txt"
    want="ok mlp"
    expect "np $np, cuda: mlp (optimizer syncs) by NCCL"
    if $PY "$D/mlp_ref.py" 15 "$T/mlp$np.txt" >"$T/out" 2>"$T/err"; then ok "np $np, cuda: mlp equals numpy's"; else bad "np $np, cuda: mlp equals numpy's"; fi
    mp $np env TL_BACKEND=cuda DIST_CHECK_WAY=nccl "$B/tests/dist_check" cnn "$T/cnn$np.txt"
    want="ok cnn"
    expect "np $np, cuda: cnn by NCCL"
    if $PY "$D/cnn_ref.py" "$T/cnn$np.txt" >"$T/out" 2>"$T/err"; then ok "np $np, cuda: cnn equals numpy's"; else bad "np $np, cuda: cnn equals numpy's"; fi
    # the language's Dist:: on cuda tensors
    mkdir -p "$T/files$np"
    mp $np env TL_BACKEND=cuda "$B/tl" run "$D/collectives.tl" "$T/files$np"
    want="ok collectives $np"
    expect "np $np, cuda: collectives.tl"
    mp $np env TL_BACKEND=cuda "$B/tl" run "$D/mlp.tl" 15 fresh -
    cp "$T/out" "$T/tlmlp$np.txt"
    if [ $rc -eq 0 ] && $PY "$D/mlp_ref.py" 15 "$T/tlmlp$np.txt" >"$T/out" 2>"$T/err"; then ok "np $np, cuda: mlp.tl equals numpy's"
    else bad "np $np, cuda: mlp.tl equals numpy's (status $rc)"; fi
  done
  # forced staging: the same values through host memory
  mp 2 env TL_BACKEND=cuda TL_DIST_NCCL=0 DIST_CHECK_WAY=staged "$B/tests/dist_check" collectives
  want="ok collectives"
  expect "np 2, cuda, TL_DIST_NCCL=0: collectives staged"
  # ranks that disagree (one without NCCL): every rank stages, no hang
  mp 2 sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then export TL_DIST_NCCL=0; fi; exec env TL_BACKEND=cuda DIST_CHECK_WAY=staged "$0" collectives' "$B/tests/dist_check"
  want="ok collectives"
  expect "np 2, cuda, rank 1 without NCCL: all stage"
else
  echo "skip the NCCL cases: they need 2 GPUs"
fi
# one GPU for two ranks: NCCL should refuse the communicator on every rank (a duplicate
# GPU), and then all stage; the values are right either way (stderr says which)
mp 2 env CUDA_VISIBLE_DEVICES=0 TL_BACKEND=cuda "$B/tests/dist_check" collectives
want="ok collectives"
expect "np 2 on one GPU: right values ($(grep -c 'could not be made' "$T/err") ranks said NCCL's communicator failed)"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
