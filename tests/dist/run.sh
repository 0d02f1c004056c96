#!/bin/sh
# run.sh BUILD — `make test-dist`: the distributed tests under OpenMPI's mpirun
# --oversubscribe -np 1..4 (docs/distributed.md). The C cases (dist_check.c) and the
# TL programs of this folder check values worked out independently (closed forms,
# numpy's mlp_ref.py); the failure cases check status, messages and that the job ends
# in seconds. Ends with "N passed, N failed"; exits 1 if any failed.
set -u
B=${1:-build}
D=$(dirname "$0")
PY=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
pass=0
fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
  fail=$((fail + 1))
  echo "FAIL $1"
  cat "$T/out" "$T/err" 2>/dev/null | grep -v '^--*$' | head -12 | sed 's/^/     /'
}
# mp NP CMD...: CMD as NP ranks, at most 60 s; stdout in $T/out, stderr in $T/err,
# status in $rc, seconds taken in $secs
mp() {
  np=$1
  shift
  t0=$(date +%s)
  timeout 60 mpirun --oversubscribe -np "$np" "$@" >"$T/out" 2>"$T/err"
  rc=$?
  secs=$(($(date +%s) - t0))
}
# expect NAME: passes when rc is 0 and stdout is exactly $want
expect() { if [ $rc -eq 0 ] && [ "$(cat "$T/out")" = "$want" ]; then ok "$1"; else bad "$1 (status $rc)"; fi; }
has() { grep -qF -- "$1" "$T/out" "$T/err"; }

if ! command -v mpirun >/dev/null 2>&1; then
  echo "test-dist: mpirun not found (Debian: apt-get install openmpi-bin libopenmpi-dev)"
  echo "0 passed, 1 failed"
  exit 1
fi

# --- without MPI: alone, or a launcher whose library cannot be loaded
"$B/tests/dist_check" collectives >"$T/out" 2>"$T/err"
rc=$?
want="ok collectives"
expect "alone, no launcher: rank 0 of 1"
mp 1 env TL_MPI_LIB=/nonexistent "$B/tests/dist_check" collectives
expect "mpirun -np 1, no MPI library: alone"
mp 2 env TL_MPI_LIB=/nonexistent "$B/tests/dist_check" collectives
if [ $rc -ne 0 ] && has "launched as 2 ranks, but MPI could not be loaded"; then ok "mpirun -np 2, no MPI library: an error"
else bad "mpirun -np 2, no MPI library: an error (status $rc)"; fi

# --- the ABI table against the installed mpi.h
if command -v mpicc >/dev/null 2>&1 && mpicc -I"$D/../../src" "$D/mpi_abi_check.c" -o "$T/abi" -ldl 2>"$T/err"; then
  "$T/abi" >"$T/out" 2>>"$T/err"
  rc=$?
  want="ok mpi_abi"
  expect "mpi_abi.h matches mpi.h"
else
  bad "mpi_abi_check.c does not build with mpicc"
fi

# --- NCCL, for cuda tensors: nccl_abi.h against the toolkit's nccl.h and its library
CUDA_DIR=${CUDA_HOME:-/usr/local/cuda}
nlib=$(ls "$CUDA_DIR"/lib64/libnccl.so.2 "$CUDA_DIR"/lib/libnccl.so.2 2>/dev/null | head -1)
if [ -f "$CUDA_DIR/include/nccl.h" ] && [ -n "$nlib" ]; then
  if cc -std=c11 -D_GNU_SOURCE -I"$CUDA_DIR/include" -I"$D/../../src" "$D/nccl_abi_check.c" -o "$T/nabi" -ldl 2>"$T/err"; then
    "$T/nabi" "$nlib" >"$T/out" 2>>"$T/err"
    rc=$?
    want="ok nccl_abi"
    expect "nccl_abi.h matches nccl.h, and $nlib has what TL calls"
  else
    bad "nccl_abi_check.c does not build against $CUDA_DIR/include"
  fi
else
  echo "skip nccl_abi_check: no nccl.h and libnccl.so.2 under $CUDA_DIR"
fi
# the way payloads go: host tensors staged without loading NCCL, a cuda tensor's choice
# (NCCL where libnccl.so.2 loads, as Python's ctypes finds it; off with TL_DIST_NCCL=0;
# absent without the library), the choice agreed, a communicator that cannot be made
# (no GPU here) failing on every rank
if $PY -c 'import ctypes; ctypes.CDLL("libnccl.so.2")' 2>/dev/null; then have=yes; else
  have=absent
  echo "note: libnccl.so.2 does not load here: cuda tensors' choice checked as 'absent'"
fi
for np in 1 2 3; do
  mp $np "$B/tests/dist_check" nccl $have
  want="ok nccl"
  expect "np $np: nccl: host tensors staged, the choice agreed (libnccl.so.2: $have)"
done
# the communicator's set-up against fake_nccl.c (no GPU needed): made on every rank and
# destroyed at MPI's finalize; one rank failing ncclCommInitRank (the others abort
# theirs, all stage); rank 0 failing ncclGetUniqueId (no rank tries to join)
if cc -std=c11 -shared -fPIC -o "$T/libfake_nccl.so" "$D/fake_nccl.c" 2>"$T/err"; then
  fake="TL_NCCL_LIB=$T/libfake_nccl.so"
  mp 3 env $fake FAKE_NCCL_LOG="$T/fk1" "$B/tests/dist_check" nccl yes
  log=$(sort "$T/fk1" 2>/dev/null | tr '\n' ' ')
  if [ $rc -eq 0 ] && [ "$log" = "destroy 0 destroy 1 destroy 2 " ]; then ok "np 3: nccl: the communicator made on every rank, destroyed at exit"
  else bad "np 3: nccl: the communicator made, destroyed at exit (status $rc, log: $log)"; fi
  mp 3 env $fake FAKE_NCCL_LOG="$T/fk2" FAKE_NCCL_FAIL_RANK=1 "$B/tests/dist_check" nccl yes
  log=$(sort "$T/fk2" 2>/dev/null | tr '\n' ' ')
  if [ $rc -eq 0 ] && [ "$log" = "abort 0 abort 2 " ] &&
    grep -qF "tl: rank 2: NCCL's communicator could not be made (rank 1: ncclCommInitRank failed)" "$T/err"; then
    ok "np 3: nccl: ncclCommInitRank failing on rank 1 fails on every rank"
  else bad "np 3: nccl: ncclCommInitRank failing on rank 1 (status $rc, log: $log)"; fi
  mp 2 env $fake FAKE_NCCL_LOG="$T/fk3" FAKE_NCCL_FAIL_ID=1 "$B/tests/dist_check" nccl yes
  if [ $rc -eq 0 ] && [ ! -e "$T/fk3" ] &&
    grep -qF "tl: rank 1: NCCL's communicator could not be made (rank 0: ncclGetUniqueId: failed)" "$T/err"; then
    ok "np 2: nccl: ncclGetUniqueId failing on rank 0 fails on every rank"
  else bad "np 2: nccl: ncclGetUniqueId failing on rank 0 (status $rc)"; fi
else
  bad "fake_nccl.c does not build"
fi
mp 2 env TL_DIST_NCCL=0 "$B/tests/dist_check" nccl off
expect "np 2: nccl: TL_DIST_NCCL=0 stages cuda tensors"
mp 3 env TL_NCCL_LIB=/nonexistent "$B/tests/dist_check" nccl absent
expect "np 3: nccl: no NCCL library stages cuda tensors"

# --- values on 1 to 4 ranks
for np in 1 2 3 4; do
  for c in collectives shard grads linreg; do
    mp $np "$B/tests/dist_check" $c
    want="ok $c"
    expect "np $np: C $c"
  done
  # tiny buckets (tensors split across them, or sent directly), blocking and pipelined
  for mb in 0.00007 0.0002; do
    for pl in 0 1; do
      mp $np env TL_DIST_BUCKET_MB=$mb TL_DIST_PIPELINE=$pl "$B/tests/dist_check" grads
      want="ok grads"
      expect "np $np: C grads, $mb MiB buckets, pipeline $pl"
    done
  done
  mp $np "$B/tests/dist_check" mlp "$T/c_mlp$np.txt"
  want="ok mlp"
  expect "np $np: C mlp (optimizer syncs)"
  mp $np "$B/tests/dist_check" cnn "$T/c_cnn$np.txt"
  want="ok cnn"
  expect "np $np: C cnn (conv, optimizer syncs)"
  mkdir -p "$T/files$np"
  mp $np "$B/tl" run "$D/collectives.tl" "$T/files$np"
  want="ok collectives $np"
  expect "np $np: collectives.tl"
  mp $np "$B/tl" run "$D/mlp.tl" 15 fresh -
  cp "$T/out" "$T/tl_mlp$np.txt"
  want=$(cat "$T/out")
  [ -n "$want" ] && expect "np $np: mlp.tl runs" || bad "np $np: mlp.tl prints nothing"
done
for f in "$T"/c_mlp*.txt "$T"/tl_mlp*.txt; do
  if $PY "$D/mlp_ref.py" 15 "$f" >"$T/out" 2>"$T/err"; then ok "$(basename "$f") equals numpy's single process"
  else bad "$(basename "$f") equals numpy's single process"; fi
done

for f in "$T"/c_cnn*.txt; do
  if $PY "$D/cnn_ref.py" "$f" >"$T/out" 2>"$T/err"; then ok "$(basename "$f") equals numpy's single process"
  else bad "$(basename "$f") equals numpy's single process"; fi
done

# --- checkpoints: 10 steps, Param::save, resume 10 = 20 straight (2 ranks)
mp 2 "$B/tl" run "$D/mlp.tl" 20 fresh -
cp "$T/out" "$T/straight.txt"
mp 2 "$B/tl" run "$D/mlp.tl" 10 fresh "$T/ck.safetensors"
mp 2 "$B/tl" run "$D/mlp.tl" 10 "$T/ck.safetensors" -
if [ -s "$T/straight.txt" ] && cmp -s "$T/out" "$T/straight.txt"; then ok "np 2: resumed 10 + 10 steps equal 20 straight"
else bad "np 2: resumed 10 + 10 steps equal 20 straight"; fi
if $PY "$D/mlp_ref.py" 20 "$T/straight.txt" >"$T/out" 2>"$T/err"; then ok "np 2: 20 steps equal numpy's"
else bad "np 2: 20 steps equal numpy's"; fi

# --- device tensors (opencl: PoCL in CI) go through host memory: the same values.
# TL_DIST_OPENCL=0 (test-dist-asan) skips them: PoCL's own allocations are reported by
# LeakSanitizer, as in test-asan, which runs no OpenCL test either
if [ "${TL_DIST_OPENCL:-1}" != 0 ] && "$B/tl" devices 2>/dev/null | grep -q '^opencl: available'; then
  for c in collectives grads; do
    mp 2 env TL_BACKEND=opencl "$B/tests/dist_check" $c
    want="ok $c"
    expect "np 2, opencl tensors: C $c"
  done
  mp 2 env TL_BACKEND=opencl "$B/tests/dist_check" nccl $have
  want="ok nccl"
  expect "np 2, opencl tensors: staged, NCCL not loaded"
  mp 2 env TL_BACKEND=opencl "$B/tests/dist_check" mlp "$T/dev_mlp2.txt"
  want="ok mlp"
  expect "np 2, opencl tensors: C mlp (optimizer syncs)"
  if $PY "$D/mlp_ref.py" 15 "$T/dev_mlp2.txt" >"$T/out" 2>"$T/err"; then ok "np 2, opencl tensors: mlp equals numpy's single process"
  else bad "np 2, opencl tensors: mlp equals numpy's single process"; fi
else
  echo "skip opencl tensors: no OpenCL platform here, or TL_DIST_OPENCL=0"
fi

# --- failures: an error on every rank naming the call; one rank failing ends the job
for np in 2 4; do
  mp $np "$B/tests/dist_check" mismatch
  want=$(printf '%s\n' "tl_dist_all_reduce: the tensors' shapes differ across ranks (rank 0 has [2, 3])" \
    "tl_dist_broadcast: the tensors' dtypes differ across ranks (rank 0 has f32)" \
    "tl_dist_broadcast: the root differs across ranks (rank 0 has root 0)" \
    "tl_dist_all_reduce: the ranks are not in the same collective call (rank 0 is in all_reduce, another rank in barrier)" \
    "ok mismatch")
  expect "np $np: C mismatches are errors on every rank"
done
mp 3 "$B/tl" run "$D/mismatch.tl"
n=$(grep -c "^rank [012]: .*mismatch.tl:6:27: runtime error: Dist::all_reduce: the tensors' shapes differ across ranks (rank [012] has \[2, [345]\])" "$T/err")
if [ $rc -eq 1 ] && [ "$n" -eq 3 ] && [ $secs -lt 20 ]; then ok "np 3: mismatch.tl: each rank says so, status 1 (${secs}s)"
else bad "np 3: mismatch.tl: $n of 3 ranks said so, status $rc, ${secs}s"; fi
mp 3 "$B/tl" run "$D/fail.tl"
if [ $rc -eq 1 ] && has "rank 2: $D/fail.tl:7:20: runtime error: index 6 is out of range for axis 0 of size 2" &&
  ! has "unreachable" && [ $secs -lt 20 ]; then ok "np 3: fail.tl: rank 2's error ends the job, status 1 (${secs}s)"
else bad "np 3: fail.tl: status $rc, ${secs}s"; fi
mp 3 "$B/tests/dist_check" abort
if [ $rc -eq 1 ] && has "rank 2: the last rank failed" && [ $secs -lt 20 ]; then ok "np 3: tl_dist_abort ends the job (${secs}s)"
else bad "np 3: tl_dist_abort ends the job (status $rc, ${secs}s)"; fi
mp 3 "$B/tests/dist_check" kill
if [ $rc -ne 0 ] && has "exited on signal 9" && [ $secs -lt 20 ]; then ok "np 3: a rank killed by SIGKILL ends the job (${secs}s)"
else bad "np 3: a rank killed by SIGKILL ends the job (status $rc, ${secs}s)"; fi
mp 2 "$B/tests/dist_check" exit_early
if [ $rc -eq 1 ] && has "rank 1: the end of the program: the ranks are not in the same collective call" &&
  has "rank 0: the barrier returned: tl_dist_barrier: the ranks are not in the same collective call" && [ $secs -lt 20 ]; then
  ok "np 2: a rank that ends while another waits: an error on both (${secs}s)"
else bad "np 2: a rank that ends while another waits (status $rc, ${secs}s)"; fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
