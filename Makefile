#===- Makefile - block-attn: the commands a user types ---------------------===#
#
#   make run     install what is missing, build, compile the seed kernels
#                for sm_90a and sm_100a (PTX, cubin, manifest; out/)
#   make check   install what is missing, build, run every test, build the
#                wheel and test it installed in a fresh virtual environment
#   make wheel   build dist/blockattn-<version>-py3-none-manylinux_*.whl: the
#                Python package, the statically linked compiler and the
#                prebuilt kernels (reuses $(BUILD_DIR))
#   make build   configure (first time) and build
#   make clean   remove the build directory
#   make fuzz    libFuzzer campaign over every fuzz target (clang-22; build in
#                build-fuzz; FUZZ_SECONDS per target, FUZZ_TARGETS to pick)
#   make check-sanitize
#                AddressSanitizer + UBSan build (build-sanitize) and its lit
#                run (docs/fuzzing.md)
#
# Dependencies (apt: LLVM/MLIR 22, cmake, ninja; pip: numpy, pytest) are
# installed by scripts/install-deps.sh, only when missing.
#
#===----------------------------------------------------------------------===#

BUILD_DIR   ?= build
LLVM_PREFIX ?= /usr/lib/llvm-22
MLIR_DIR    ?= $(LLVM_PREFIX)/lib/cmake/mlir
LIT         ?= $(LLVM_PREFIX)/bin/lit
PYTHON      ?= python3
CMAKE_FLAGS ?=
# pytest's processes (pytest-xdist; the emulator tests keep a core busy each).
# A file per process (--dist loadfile): some files' tests build on module
# state an earlier test of the file set up (the fast path's registrations).
PYTEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)

FUZZ_BUILD_DIR     ?= build-fuzz
FUZZ_SECONDS       ?= 300
FUZZ_TARGETS       ?= parse warp-specialize allocate-smem allocate-tmem \
                      convert-to-nvvm blockattn-to-ptx compile-flags
FUZZ_FLAGS         ?= -timeout=30 -rss_limit_mb=4096 -max_len=65536
# Coverage for libFuzzer in every object of ours, and the sanitizers.
FUZZ_CXXFLAGS      ?= -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
SANITIZE_BUILD_DIR ?= build-sanitize
SANITIZE_FLAGS     ?= -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer

.PHONY: all build check run clean deps fuzz fuzz-build check-sanitize wheel check-wheel

all: build

deps:
	PYTHON=$(PYTHON) ./scripts/install-deps.sh

# Configure only the first time (or after a failed configure): afterwards
# ninja re-runs cmake by itself when a CMakeLists.txt changes.
build:
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then \
	  echo "cmake -G Ninja -S . -B $(BUILD_DIR) ..."; \
	  cmake -G Ninja -S . -B $(BUILD_DIR) -DMLIR_DIR=$(MLIR_DIR) \
	    -DLLVM_EXTERNAL_LIT=$(LIT) $(CMAKE_FLAGS) || exit 1; \
	fi
	ninja -C $(BUILD_DIR)

# The steps run in order even under `make -j`.
check: deps
	$(MAKE) --no-print-directory build
	ninja -C $(BUILD_DIR) check-blockattn
	@if [ -d python/tests ]; then \
	  jobs=; $(PYTHON) -c "import xdist" 2>/dev/null && jobs="-n $(PYTEST_JOBS) --dist loadfile"; \
	  echo "PYTHONPATH=python $(PYTHON) -m pytest -q $$jobs python/tests"; \
	  PYTHONPATH=python $(PYTHON) -m pytest -q $$jobs python/tests; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest: no tests collected"; rc=0; fi; \
	  exit $$rc; \
	else \
	  echo "python/tests does not exist yet: skipping the Python tests"; \
	fi
	$(MAKE) --no-print-directory check-wheel

# The wheel: scikit-build-core (pyproject.toml) re-runs CMake in $(BUILD_DIR),
# builds blockattn-wheel-files there (the static compiler, the prebuilt
# kernels) and installs the `wheel` component next to python/blockattn. The
# platform tag is the glibc the compiler needs (scripts/wheel_platform.py,
# which also refuses any library that glibc does not provide), so the
# compiler is linked first; the kernels are left to the wheel build, which
# configures with its own Python (a change of the interpreter's path would
# compile them again).
wheel: deps
	$(MAKE) --no-print-directory build
	ninja -C $(BUILD_DIR) block-attn-compile-static
	rm -f dist/blockattn-*.whl
	tag=$$($(PYTHON) scripts/wheel_platform.py $(BUILD_DIR)/bin-static/block-attn-compile) && \
	  $(PYTHON) -m pip wheel --no-deps --no-build-isolation --disable-pip-version-check \
	    -w dist -Cbuild-dir=$(BUILD_DIR) -Cwheel.tags=py3-none-$$tag .
	@ls -l dist/blockattn-*.whl

# Installs the wheel into a fresh venv and tests it there (no GPU needed).
check-wheel: wheel
	PYTHON=$(PYTHON) BLOCKATTN_REFERENCE_COMPILER=$(abspath $(BUILD_DIR))/bin/block-attn-compile \
	  scripts/check_wheel.sh dist/blockattn-*.whl

run: deps
	$(MAKE) --no-print-directory build
	BUILD_DIR=$(BUILD_DIR) ./scripts/run.sh

# A libFuzzer build of the fuzz targets (clang-22 against the same LLVM 22
# libraries), then FUZZ_SECONDS of random search per target, one process,
# starting from the committed corpus. New inputs go to $(FUZZ_BUILD_DIR)/
# corpus/<target>; crashes to $(FUZZ_BUILD_DIR)/findings/<target>.
fuzz-build:
	FUZZ=1 PYTHON=$(PYTHON) ./scripts/install-deps.sh
	@if [ ! -f $(FUZZ_BUILD_DIR)/build.ninja ]; then \
	  cmake -G Ninja -S . -B $(FUZZ_BUILD_DIR) -DMLIR_DIR=$(MLIR_DIR) \
	    -DLLVM_EXTERNAL_LIT=$(LIT) -DCMAKE_CXX_COMPILER=clang++-22 \
	    -DCMAKE_C_COMPILER=clang-22 -DBLOCKATTN_LIBFUZZER=ON \
	    -DCMAKE_CXX_FLAGS="$(FUZZ_CXXFLAGS)" \
	    || exit 1; \
	fi
	ninja -C $(FUZZ_BUILD_DIR) $(addprefix blockattn-fuzz-,$(FUZZ_TARGETS))

fuzz: fuzz-build
	./scripts/fuzz.sh $(FUZZ_BUILD_DIR) $(FUZZ_SECONDS) "$(FUZZ_FLAGS)" $(FUZZ_TARGETS)

# Everything built with AddressSanitizer and UBSan (g++), and the lit tests
# run with it: any report fails the test that triggered it. Install/consumer
# is left out: it links an outside program, built without the sanitizer
# runtimes, against the installed (here instrumented) libraries; `make check`
# runs it.
check-sanitize: deps
	@if [ ! -f $(SANITIZE_BUILD_DIR)/build.ninja ]; then \
	  cmake -G Ninja -S . -B $(SANITIZE_BUILD_DIR) -DMLIR_DIR=$(MLIR_DIR) \
	    -DLLVM_EXTERNAL_LIT=$(LIT) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCMAKE_CXX_FLAGS="$(SANITIZE_FLAGS)" \
	    -DCMAKE_EXE_LINKER_FLAGS="$(SANITIZE_FLAGS)" \
	    -DCMAKE_SHARED_LINKER_FLAGS="$(SANITIZE_FLAGS)" || exit 1; \
	fi
	ninja -C $(SANITIZE_BUILD_DIR)
	ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  $(LIT) -sv --filter-out 'Install/consumer' $(SANITIZE_BUILD_DIR)/test

clean:
	rm -rf $(BUILD_DIR)
