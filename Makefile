# TL — build with `make`, test with `make test`, benchmark with `make bench`.
CC      ?= cc
OPT     ?= -O2 -g
CFLAGS  := $(OPT) -std=c11 -D_GNU_SOURCE -Wall -Wextra -fPIC -Iinclude -Isrc -Ibuild/gen
LDLIBS  += -ldl -lpthread -lm
BUILD   ?= build

# libtcc (Debian's libtcc-dev ships only a static, non-PIC archive): when present it is
# linked into programs, where TL finds it by symbol for tl_set_compiler(ctx, "tcc").
TCC_A    := $(wildcard /usr/lib/x86_64-linux-gnu/libtcc.a)
TCC_LINK := -rdynamic -Wl,--whole-archive $(TCC_A) -Wl,--no-whole-archive
BIN_LIBS := $(if $(TCC_A),$(TCC_LINK)) $(LDLIBS)

# src/lang is split by stage: front/ check/ gen/ rt/ (docs/architecture.md)
SRC      := $(wildcard src/*/*.c) $(wildcard src/lang/*/*.c)
OBJ      := $(SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(wildcard tests/*.c) $(wildcard tests/fuzz/fuzz_*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)
GEN      := build/gen/kernel_prelude.inc build/gen/lang_prelude.inc build/gen/prelude_cl.inc build/gen/prelude_cuda.inc build/gen/tl_stdlib.inc
# programs that load generated code export the library to it
WHOLE_LIB = -rdynamic -Wl,--whole-archive $(BUILD)/libtl.a -Wl,--no-whole-archive

.PHONY: all test bench bench-gpu bench-peers example clean
all: $(BUILD)/libtl.a $(BUILD)/libtl.so $(BUILD)/tl $(BUILD)/examples/engine_tour $(BUILD)/examples/train_spirals

# The kernel prelude is C compiled into the library (the scalar semantics in
# src/core/scalar.h: constant folding and the interpreter use them) and also pasted,
# as text, in front of every generated kernel: one source for both.
build/gen/kernel_prelude.inc: src/core/scalar.h src/codegen/kernel_prelude.h src/codegen/kernel_prelude_conv.h
	@mkdir -p $(dir $@)
	cat $^ | grep -v 'tl-prelude: dropped' | \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' > $@

# the same scalar semantics in front of every OpenCL C kernel, after a few lines that
# give OpenCL's names for C's (src/codegen/prelude_cl.h)
build/gen/prelude_cl.inc: src/codegen/prelude_cl.h src/core/scalar.h
	@mkdir -p $(dir $@)
	cat $^ | grep -v 'tl-prelude: dropped' | \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' > $@

# and in front of every CUDA C kernel (src/codegen/prelude_cuda.h)
build/gen/prelude_cuda.inc: src/codegen/prelude_cuda.h src/core/scalar.h
	@mkdir -p $(dir $@)
	cat $^ | grep -v 'tl-prelude: dropped' | \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' > $@

# the run-time headers, pasted in front of every compiled TL program (core/hash_mix.h:
# the one hash mix, inline, which a HashMap's struct keys use; core/scalar.h and
# core/half.h: the one rounding to f16 and bf16)
build/gen/lang_prelude.inc: include/tl.h src/core/hash_mix.h src/core/scalar.h src/core/half.h src/lang/rt/rt.h src/lang/rt/rt_ops.h src/lang/rt/rt_sys.h src/lang/rt/rt_vec.h src/lang/rt/rt_dist.h src/lang/rt/rt_ml.h
	@mkdir -p $(dir $@)
	(echo '#include <math.h>'; cat include/tl.h src/core/hash_mix.h src/core/scalar.h src/core/half.h src/lang/rt/rt.h src/lang/rt/rt_ops.h src/lang/rt/rt_sys.h src/lang/rt/rt_vec.h src/lang/rt/rt_dist.h src/lang/rt/rt_ml.h | grep -v '^#include "') | \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' > $@

# library types written in TL (src/lang/std/*.tl, each first line `// std: Name`), as
# {"file.tl", "text"} rows for src/lang/front/stdlib.c
build/gen/tl_stdlib.inc: $(sort $(wildcard src/lang/std/*.tl))
	@mkdir -p $(dir $@)
	for f in $^; do \
	  printf '{"%s",\n' "$$(basename $$f)"; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $$f; \
	  printf '},\n'; \
	done > $@

$(BUILD)/tl: tools/tl.c $(BUILD)/libtl.a
	$(CC) $(CFLAGS) -o $@ $< $(WHOLE_LIB) $(BIN_LIBS)

$(BUILD)/obj/%.o: %.c $(GEN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# the library exports only what carries TL_API (include/tl.h): the public API and the
# run time that compiled TL programs call (the headers pasted into lang_prelude.inc)
$(OBJ): CFLAGS += -fvisibility=hidden

$(BUILD)/libtl.a: $(OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libtl.so: $(OBJ)
	$(CC) -shared -Wl,--no-undefined -o $@ $^ $(LDLIBS)

# tests/test_alloc_fail.c fails chosen allocations: the suite's binary routes them
# through its hook (the library itself is built as for users)
WRAP_ALLOC := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=aligned_alloc
$(BUILD)/tests/tl_tests: $(TEST_OBJ) $(BUILD)/libtl.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(TEST_OBJ) $(WHOLE_LIB) $(BIN_LIBS) $(WRAP_ALLOC)

$(BUILD)/examples/%: examples/%.c $(BUILD)/libtl.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libtl.a $(BIN_LIBS)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libtl.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -O3 -o $@ $< $(BUILD)/libtl.a $(LDLIBS)

# the suite also drives the `tl` command (build/tl, the regular build); the install
# tests install this build directory's tl and libraries. check_layers.sh: every
# external symbol of libtl.a starts with tl, the language's stages call one way, and
# src/'s folders include and call only folders of lower or equal rank, in no circle.
test: $(BUILD)/tests/tl_tests build/tl $(BUILD)/tl $(BUILD)/libtl.so
	sh tests/check_layers.sh $(BUILD)
	$(BUILD)/tests/tl_tests

# the TL programs `make example` runs, the flagship first, then the C examples
TL_EXAMPLES ?= examples/nqueens.tl examples/kinship.tl examples/shortest_path.tl examples/linear_regression.tl

example: $(BUILD)/examples/engine_tour $(BUILD)/examples/train_spirals $(BUILD)/tl
	for p in $(TL_EXAMPLES); do echo "== tl run $$p"; $(BUILD)/tl run $$p || exit 1; done
	$(BUILD)/examples/engine_tour
	$(BUILD)/examples/train_spirals

# jax and tinygrad, the peers the bench adds where pip installs them: a venv in
# $(BUILD)/peers that also sees the system's numpy and torch (Debian's python takes pip
# installs only in a venv). Tried once per build directory, `make bench-peers` tries
# again; without them their bench lines say note=not_installed.
PEERS_PYTHON ?= /usr/bin/python3
$(BUILD)/peers/tried:
	-$(PEERS_PYTHON) -m venv --system-site-packages $(BUILD)/peers && $(BUILD)/peers/bin/pip install -q jax tinygrad
	@mkdir -p $(dir $@) && touch $@

bench-peers:
	rm -f $(BUILD)/peers/tried
	$(MAKE) $(BUILD)/peers/tried

bench: $(BUILD)/bench/bench_engine $(BUILD)/bench/bench_mem $(BUILD)/bench/bench_train $(BUILD)/bench/bench_lang $(BUILD)/tl $(BUILD)/bench/bench_logic $(BUILD)/bench/bench_lib $(BUILD)/bench/bench_backends $(BUILD)/peers/tried
	TL_PEER_PYTHON=$(BUILD)/peers/bin/python $(BUILD)/bench/bench_engine
	$(BUILD)/bench/bench_mem
	TL_PEER_PYTHON=$(BUILD)/peers/bin/python $(BUILD)/bench/bench_train
	$(BUILD)/bench/bench_lang $(BUILD)/tl $(BUILD)/bench
	$(BUILD)/bench/bench_logic ../shared $(BUILD)/bench/datalog
	$(BUILD)/bench/bench_lib
	$(BUILD)/bench/bench_backends

# On an NVIDIA GPU: TL's cuda backend against torch eager on the same GPU (bench/bench_gpu.c);
# bench/gpu_check.sh runs the suites on the GPU first. Without a GPU it says so.
bench-gpu: $(BUILD)/bench/bench_gpu
	$(BUILD)/bench/bench_gpu

clean:
	rm -rf build

# make install [PREFIX=/usr/local] [DESTDIR=a staging root]: the tl command, libtl.a,
# libtl.so, tl.h and the pkg-config file tl.pc (pkg-config --cflags --libs tl).
# An installed tl finds the libtl.a for `tl build` in ../lib beside its bin/.
PREFIX     ?= /usr/local
DESTDIR    ?=
TL_VERSION := 0.1.0
INST       = $(DESTDIR)$(PREFIX)
.PHONY: install
install: $(BUILD)/tl $(BUILD)/libtl.a $(BUILD)/libtl.so
	install -d "$(INST)/bin" "$(INST)/lib/pkgconfig" "$(INST)/include"
	install -m 755 $(BUILD)/tl "$(INST)/bin/tl"
	install -m 644 $(BUILD)/libtl.a "$(INST)/lib/libtl.a"
	install -m 755 $(BUILD)/libtl.so "$(INST)/lib/libtl.so"
	install -m 644 include/tl.h "$(INST)/include/tl.h"
	printf '%s\n' 'prefix=$(PREFIX)' 'exec_prefix=$${prefix}' 'libdir=$${exec_prefix}/lib' \
	  'includedir=$${prefix}/include' '' 'Name: tl' \
	  'Description: TL tensor engine: lazy tensors fused into kernels compiled to C' \
	  'Version: $(TL_VERSION)' 'Libs: -L$${libdir} -ltl' 'Libs.private: -ldl -lpthread -lm' \
	  'Cflags: -I$${includedir}' > "$(INST)/lib/pkgconfig/tl.pc"

-include $(OBJ:.o=.d) $(TEST_OBJ:.o=.d)

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer, built with clang
# where there is one: its UBSan also checks pointer arithmetic (NULL + 0 included),
# which gcc's does not.
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ASAN_CC    ?= $(if $(shell command -v clang),clang,$(CC))
# Every kernel of the differential suite rendered as CUDA C, compiled by NVRTC for sm_90
# and its PTX assembled by ptxas (the toolkit's, found at run time: /usr/local/cuda, or
# TL_NVRTC and TL_PTXAS; none: the tests say so and pass), as a machine without a GPU
# can check the cuda backend's kernels
.PHONY: test-cuda-compile
test-cuda-compile: $(BUILD)/tests/tl_tests
	TL_DIFF_CUDA_COMPILE=1 $(BUILD)/tests/tl_tests diff_random diff_special cuda

.PHONY: test-asan test-valgrind test-tsan
# The OpenCL tests (PoCL) run natively only, as under valgrind: under ASan, PoCL's
# LLVM aborted now and then ("Failed to create kernel compiler pass") and LSan's tracer
# crashed on its worker threads at exit. The CUDA tests (NVRTC, C++) run under ASan
# without LeakSanitizer, whose reports there are NVRTC's; the suite's own leak check
# (every context ends with nothing live) runs on them.
POCL_TESTS := opencl diff_device golden_device
test-asan: build/tl
	$(MAKE) BUILD=build/asan CC=$(ASAN_CC) OPT="$(ASAN_FLAGS)" build/asan/tests/tl_tests
	ASAN_OPTIONS=detect_leaks=1 build/asan/tests/tl_tests $(addprefix -,$(POCL_TESTS)) -cuda
	ASAN_OPTIONS=detect_leaks=0 build/asan/tests/tl_tests cuda

# The concurrency tests under ThreadSanitizer: contexts on several threads at once
# (tests/test_threads.c), the kernel cache shared by threads and processes
# (test_cache_attack.c), the thread pool (rt_pool). Generated kernels and programs
# are compiled without instrumentation (they write only buffers the pool hands out).
# TSAN_TESTS picks other tests; tests/tsan.supp says why each suppression is there.
TSAN_FLAGS := -O1 -g -fsanitize=thread -fno-omit-frame-pointer
TSAN_TESTS ?= threads_ cache_ rt_pool rt_compile tiered_
test-tsan: build/tl
	$(MAKE) BUILD=build/tsan OPT="$(TSAN_FLAGS)" build/tsan/tests/tl_tests
	TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$(CURDIR)/tests/tsan.supp" \
	  build/tsan/tests/tl_tests $(TSAN_TESTS)

# The differential test's random graphs against numpy (not in `make test`): 10,000
# graphs of tests/test_diff.c's generator (included by tests/numpy/check_numpy.c, every
# engine call recorded), each realized by the interpreter and by compiled kernels
# (libtcc when linked: fast to compile; CHECK_NUMPY_CC=cc for the system compiler),
# recomputed with numpy by tests/numpy/check_numpy.py; then 3,000 of its cast graphs
# (extreme values through every dtype) and 3,000 of its special-value graphs (NaN, inf,
# subnormals, empty axes; compared to the subnormal). NUMPY_GRAPHS, NUMPY_CAST_GRAPHS,
# NUMPY_SPECIAL_GRAPHS set the counts.
NUMPY_GRAPHS ?= 10000
NUMPY_CAST_GRAPHS ?= 3000
NUMPY_SPECIAL_GRAPHS ?= 3000
CHECK_NUMPY_CC ?= $(if $(TCC_A),tcc,cc)
.PHONY: check-numpy
$(BUILD)/check_numpy: tests/numpy/check_numpy.c tests/test_diff.c $(BUILD)/libtl.a
	$(CC) $(CFLAGS) -Itests -o $@ $< $(WHOLE_LIB) $(BIN_LIBS)
check-numpy: $(BUILD)/check_numpy
	CHECK_NUMPY_CC=$(CHECK_NUMPY_CC) /usr/bin/python3 tests/numpy/check_numpy.py $(BUILD)/check_numpy $(NUMPY_GRAPHS) 2 plain
	CHECK_NUMPY_CC=$(CHECK_NUMPY_CC) /usr/bin/python3 tests/numpy/check_numpy.py $(BUILD)/check_numpy $(NUMPY_CAST_GRAPHS) 2 casts
	CHECK_NUMPY_CC=$(CHECK_NUMPY_CC) /usr/bin/python3 tests/numpy/check_numpy.py $(BUILD)/check_numpy $(NUMPY_SPECIAL_GRAPHS) 2 special

# memcheck over the suite, but for the tests that are long loops over the same code
# (the 1,000-graph differential and gradient tests, the 100,000-deep chain, the
# training runs): they run natively and under ASan, too slow under valgrind
# Kernels are built without -march=native here: valgrind's emulation of fused
# multiply-add gets the sign of an exact zero wrong (0.5 - 2 * 0.25 gives -0.0).
# TL_TIERED=0: kernels are cc's only; memcheck flags libtcc's code (tier 1) for reading
# float spill slots only partly written (the values are right: diff_tier1_matches_tier2
# and the suite under ASan run tier 1).
# The device backends' tests (opencl, diff_device, golden_device, cuda) run PoCL and NVRTC, whose LLVM and
# compiler memcheck flags on their own (they run natively and under ASan).
test-valgrind: $(BUILD)/tests/tl_tests build/tl $(BUILD)/tl $(BUILD)/libtl.so
	TL_TIERED=0 TL_CFLAGS="-O2 -fno-math-errno" valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	  $(BUILD)/tests/tl_tests -diff_random -deep_chains -grad_random -train_mlp -training_loop -alloc_fail -opencl -diff_device -golden_device -cuda

# Fuzzing with AFL++ (Debian package afl++): `make fuzz FUZZ_SECONDS=600` builds the
# library and one binary per harness of tests/fuzz with afl-clang-fast (ASan and UBSan
# on) and runs each for FUZZ_SECONDS, seeded from tests/fuzz/corpus/NAME; findings land
# in build/fuzz/out/NAME. FUZZ=name runs one harness. `make test` replays the corpus.
FUZZ_CC      ?= afl-clang-fast
FUZZ_SECONDS ?= 60
FUZZ         ?= front npy safetensors kb capi run
FUZZ_FLAGS   := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
.PHONY: fuzz fuzz-build
fuzz-build: build/tl
	$(MAKE) BUILD=build/fuzz CC=$(FUZZ_CC) OPT="$(FUZZ_FLAGS)" build/fuzz/libtl.a
	@mkdir -p build/fuzz/bin
	for h in $(FUZZ); do \
	  $(FUZZ_CC) $(FUZZ_FLAGS) -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -Itests -DTL_FUZZ_HARNESS=tl_fuzz_$$h \
	    -o build/fuzz/bin/fuzz_$$h tests/fuzz/afl_driver.c tests/fuzz/fuzz_*.c \
	    -rdynamic -Wl,--whole-archive build/fuzz/libtl.a -Wl,--no-whole-archive $(BIN_LIBS) || exit 1; \
	done
fuzz: $(addprefix fuzz-run-,$(FUZZ))
# one harness; `make -j6 fuzz` runs all six at once, a core each
fuzz-run-%: fuzz-build
	mkdir -p build/fuzz/out/$*
	dict=; case $* in front|run|kb) dict="-x tests/fuzz/dict/tl.dict";; esac; \
	AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_AUTORESUME=1 \
	ASAN_OPTIONS=abort_on_error=1:detect_leaks=0:symbolize=0 \
	  afl-fuzz -V $(FUZZ_SECONDS) -t 5000 -m none $$dict -i tests/fuzz/corpus/$* -o build/fuzz/out/$* \
	  -- build/fuzz/bin/fuzz_$* > build/fuzz/out/$*.log 2>&1 || { tail -n 20 build/fuzz/out/$*.log; exit 1; }
	@grep -E "execs_done|run_time|saved_crashes|saved_hangs" build/fuzz/out/$*/default/fuzzer_stats | sed 's/^/$*: /'
# every input the fuzzers kept (queue, crashes, hangs of build/fuzz/out*/NAME) run once
# more with LeakSanitizer on, which the fuzzing runs turn off for speed: a leak of memory
# the context does not count (its own leak check runs in every harness) shows here
.PHONY: fuzz-leaks
fuzz-leaks: fuzz-build
	@for h in $(FUZZ); do \
	  n=0; bad=0; \
	  for f in build/fuzz/out*/$$h/*/queue/id* build/fuzz/out*/$$h/*/crashes/id* build/fuzz/out*/$$h/*/hangs/id*; do \
	    [ -f "$$f" ] || continue; n=$$((n+1)); \
	    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 timeout 20 build/fuzz/bin/fuzz_$$h "$$f" > /dev/null 2> build/fuzz/leak.txt \
	      || { bad=$$((bad+1)); echo "$$h: $$f"; head -n 20 build/fuzz/leak.txt; }; \
	  done; \
	  echo "fuzz-leaks $$h: $$n inputs, $$bad failed"; \
	done

# ---- distributed (issue 28): the C cases and TL programs of tests/dist/ under mpirun
# -np 1..4 (docs/distributed.md); where mpirun is missing it fails, saying what to install
$(BUILD)/tests/dist_check: tests/dist/dist_check.c $(BUILD)/libtl.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(WHOLE_LIB) $(BIN_LIBS)

.PHONY: test-dist bench-dist
test-dist: $(BUILD)/tests/dist_check $(BUILD)/tl
	sh tests/dist/run.sh $(BUILD)

# NCCL on the cuda backend, for a machine with 2 or more GPUs, OpenMPI and NCCL (not
# run by test-dist, which needs no GPU): tests/dist/nccl_gpu.sh
.PHONY: test-dist-nccl
test-dist-nccl: $(BUILD)/tests/dist_check $(BUILD)/tl
	sh tests/dist/nccl_gpu.sh $(BUILD)

# the same under ASan and LeakSanitizer: OpenMPI's own allocations kept until exit are
# suppressed (tests/dist/lsan_mpi.supp; its plugins stay loaded so their frames have
# names), TL's are not
.PHONY: test-dist-asan test-dist-valgrind
test-dist-asan:
	$(MAKE) BUILD=build/asan CC=$(ASAN_CC) OPT="$(ASAN_FLAGS)" build/asan/tests/dist_check build/asan/tl
	ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 OMPI_MCA_mca_base_component_disable_dlclose=1 TL_DIST_OPENCL=0 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/dist/lsan_mpi.supp:print_suppressions=0 sh tests/dist/run.sh build/asan

# the MLP step at 1, 2 and 4 ranks and the all-reduce against MPI_Allreduce called
# directly (bench/bench_dist.c, built with mpicc; docs/distributed.md has the figures)
$(BUILD)/bench/bench_dist: bench/bench_dist.c $(BUILD)/libtl.a
	@mkdir -p $(dir $@)
	mpicc $(CFLAGS) -O3 -o $@ $< $(WHOLE_LIB) $(LDLIBS)

bench-dist: $(BUILD)/bench/bench_dist
	for np in 1 2 4; do OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TL_THREADS=1 \
	  mpirun --oversubscribe -np $$np $(BUILD)/bench/bench_dist || exit 1; done

# the C cases under valgrind on 2 ranks: OpenMPI's suppressions and ours for what MPI keeps
# (tests/dist/valgrind_mpi.supp); any error or definite leak of TL's fails
DIST_VG := valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9 \
  --suppressions=/usr/share/openmpi/openmpi-valgrind.supp --suppressions=$(CURDIR)/tests/dist/valgrind_mpi.supp
test-dist-valgrind: $(BUILD)/tests/dist_check
	for c in collectives shard grads mlp; do OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	  OMPI_MCA_mca_base_component_disable_dlclose=1 mpirun --oversubscribe -np 2 $(DIST_VG) \
	  $(BUILD)/tests/dist_check $$c /dev/null || exit 1; done
