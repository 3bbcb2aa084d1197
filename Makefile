# The two commands a newcomer needs: `make build` and `make test`. Both install what is missing first
# (ci/install-toolchains.sh is idempotent and quick when everything is there).
VENV      ?= $(or $(ISAFORGE_VENV),.venv)
PYTHON    := $(VENV)/bin/python
ISAFORGE  := $(VENV)/bin/isaforge
QEMU_CPUS ?=
TARGETS ?=
TOOLCHAINS ?=
# `make test` runs a representative slice: every toolchain (both arches, both compilers) on the baseline-only
# models (cortex-a53, cortex-a7: nothing may raise SIGILL) and on `max` (every variant, every SVE vector length),
# without the tests marked slow or peers. The rest (every other CPU model, the debug + UBSan builds, the slow tests,
# the peer libraries' tests) is in `make ci`. PYTEST_ARGS= (empty) runs the whole suite on every model.
SLICE_CPUS ?= cortex-a53,cortex-a7,max
PYTEST_ARGS ?= --isaforge-qemu-cpu $(SLICE_CPUS) -m "not slow and not peers"
# pytest-xdist workers, one per core (QEMU runs one guest thread at a time): every worker shares the same builds
# (one per toolchain, locked while it builds); the tests sharing a Conan home or an installed wheel stay on one worker
# (xdist_group). WORKERS=0 runs in one process.
WORKERS ?= auto
PYTEST_WORKERS = $(if $(filter 0,$(WORKERS)),,-n $(WORKERS) --dist loadgroup)
# make check: the loop while you work, one toolchain on one model, without the tests that build projects, packages or
# wheels of their own (marked e2e).
CHECK_TOOLCHAIN ?= aarch64-linux-gnu-clang
CHECK_CPU ?= max
# make ci: cells at the same time (-j), and a cell selection (isaforge matrix run --only; e.g. ONLY='compiler=clang').
JOBS ?= 1
ONLY ?=
# make bench: what docs/performance.md is made with.
BENCH_ARGS ?= --compiler clang,gcc --shapes 64x64x64,128x128x128,256x256x64,1x1024x1024,49x256x2304 \
  --markdown docs/performance.md --plot docs/performance.png

.PHONY: all install build test check bench test-qemu ci ci-suite ci-matrix fuzz docker-image docker-test lint format clean

all: build

install:
	@bash ci/install-toolchains.sh

## Cross-build libisaforge for aarch64 and armv7 with gcc and clang, then show dispatch under every QEMU CPU model.
build: install
	$(ISAFORGE) build

## Lint, then the pytest suite's representative slice (PYTEST_ARGS above; PYTEST_ARGS= for all of it), on WORKERS
## processes. The peer libraries' tests are in make ci and make bench.
test: install lint
	$(PYTHON) -m pytest $(PYTEST_WORKERS) $(PYTEST_ARGS)

## The fast loop: the suite on one toolchain and one CPU model, no e2e tests, no lint
## (make check [CHECK_TOOLCHAIN=arm-linux-gnueabihf-gcc] [CHECK_CPU=cortex-a7]).
check: install
	$(PYTHON) -m pytest $(PYTEST_WORKERS) --isaforge-toolchains $(CHECK_TOOLCHAIN) --isaforge-qemu-cpu $(CHECK_CPU) \
	  -m "not slow and not peers and not e2e"

## docs/performance.md and its charts, regenerated: the hot loops and instruction counts of both compilers, then
## libisaforge against the libraries engines use today (OpenBLAS, BLIS, XNNPACK from Debian's arm64 packages,
## installed first), one whole call of each under QEMU in modeled cycles (BENCH_ARGS='...' for other options).
bench: install
	@bash ci/install-toolchains.sh --peers
	$(ISAFORGE) bench --peers $(BENCH_ARGS)

## libisaforge's kernels proven under QEMU the way an engine proves its own (isaforge test-qemu --project .): the Meson
## suite on every CPU model and down the cap walk on max, a kernel × CPU-model coverage matrix per toolchain:
## make test-qemu [QEMU_CPUS=cortex-a53,max] [TARGETS=aarch64-linux-gnu] [TOOLCHAINS=arm-linux-gnueabihf-clang]
test-qemu: install
	$(ISAFORGE) test-qemu --project . $(if $(QEMU_CPUS),--qemu-cpu $(QEMU_CPUS)) \
	  $(if $(TARGETS),--targets $(TARGETS)) $(if $(TOOLCHAINS),--toolchains $(TOOLCHAINS))

## The whole CI matrix here, as .github/workflows/cross.yml runs it: lint and the tests outside the cells, then every
## cell of ci/matrix.toml (make ci [JOBS=2] [ONLY='build=debug-ubsan']; see docs/ci.md), then the long fuzz campaign.
## The CI image first: the suite's slow tests run make test in it (what make docker-test does), and fail rather than
## skip without an engine, so an install step the image lacks fails make ci.
ci: export ISAFORGE_REQUIRE_DOCKER := 1
ci: docker-image ci-suite ci-matrix fuzz

## The peer libraries are installed first (best effort) so that their tests (marked peers) run rather than skip.
ci-suite: install lint
	@bash ci/install-toolchains.sh --peers
	$(PYTHON) -m pytest $(PYTEST_WORKERS) --ignore=tests/kernels -p no:cacheprovider

ci-matrix: install
	$(ISAFORGE) matrix run -j $(JOBS) $(if $(ONLY),--only "$(ONLY)")

## A long fuzz campaign of isf_gemm_import and isf_gemm_packed (tests/kernels/fuzz_plan.c, ASan + UBSan under QEMU,
## both arches) that goes on past each finding (up to 200) and prints the distinct ones (make fuzz [FUZZ_EXECS=N]).
FUZZ_EXECS ?= 50000
fuzz: install
	ISAFORGE_FUZZ_EXECS=$(FUZZ_EXECS) $(PYTHON) -m pytest tests/kernels/runtime/test_fuzz.py -k campaign -s

## The CI image (ci/Dockerfile): installs a Docker engine and debootstrap when missing, starts dockerd when none runs
## (as root), builds the base with debootstrap where no registry answers, then the image (isaforge docker image).
docker-image: install
	@bash ci/install-toolchains.sh --docker
	$(ISAFORGE) docker image

## make test inside the image: a clean copy of the checkout, no network, a non-root user; prints pytest's summary.
docker-test: docker-image
	$(ISAFORGE) docker test

# C sources in one style (.clang-format); the clang-format version is pinned in pyproject.toml, as styles drift.
C_SOURCES = $(shell git ls-files '*.c' '*.h')

lint: install
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/ruff format --check src tests
	@echo "clang-format --dry-run --Werror <$(words $(C_SOURCES)) C files>"
	@$(VENV)/bin/clang-format --dry-run --Werror $(C_SOURCES)

## Format the Python and C sources in place.
format: install
	$(VENV)/bin/ruff format src tests
	$(VENV)/bin/clang-format -i $(C_SOURCES)

clean:
	rm -rf build build-isaforge
