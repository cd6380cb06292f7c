#===- Makefile - block-attn: the commands a user types ---------------------===#
#
#   make run     install what is missing, build, compile the seed kernels
#                for sm_90a and sm_100a (PTX, cubin, manifest; out/)
#   make check   install what is missing, build, run every test
#   make build   configure (first time) and build
#   make clean   remove the build directory
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

.PHONY: all build check run clean deps

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
	  echo "PYTHONPATH=python $(PYTHON) -m pytest -q python/tests"; \
	  PYTHONPATH=python $(PYTHON) -m pytest -q python/tests; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest: no tests collected"; rc=0; fi; \
	  exit $$rc; \
	else \
	  echo "python/tests does not exist yet: skipping the Python tests"; \
	fi

run: deps
	$(MAKE) --no-print-directory build
	BUILD_DIR=$(BUILD_DIR) ./scripts/run.sh

clean:
	rm -rf $(BUILD_DIR)
