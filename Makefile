# The two commands a newcomer needs: `make build` and `make test`. Both install what is missing first
# (ci/install-toolchains.sh is idempotent and quick when everything is there).
VENV      ?= .venv
PYTHON    := $(VENV)/bin/python
ISAFORGE  := $(VENV)/bin/isaforge
QEMU_CPUS ?=
TOOLCHAINS ?=
PYTEST_ARGS ?=

.PHONY: all install build test test-qemu lint clean

all: build

install:
	@bash ci/install-toolchains.sh

## Cross-build libisaforge for aarch64 and armv7 with gcc and clang, then show dispatch under every QEMU CPU model.
build: install
	$(ISAFORGE) build

## Lint, then the whole pytest suite (catalogue, codegen, toolchains, isolation, dispatch and numerics under QEMU).
test: install lint
	$(PYTHON) -m pytest $(PYTEST_ARGS)

## Only the QEMU suite, for chosen models: make test-qemu QEMU_CPUS=cortex-a53,max [TOOLCHAINS=aarch64-linux-gnu-gcc]
test-qemu: install
	$(PYTHON) -m pytest tests/kernels --qemu-cpu "$(QEMU_CPUS)" --toolchains "$(TOOLCHAINS)" $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/ruff format --check src tests

clean:
	rm -rf build
