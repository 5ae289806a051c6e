# LeanMPI — two commands on a fresh machine:
#   make demo    install what is missing, build, run the showcase
#   make check   install what is missing, build, run the whole test suite
BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_ARGS ?=

.PHONY: all deps build demo check install clean format
all: build

# Build needs only a C compiler, CMake and a build tool; tests need Python 3,
# pkg-config (the installation test checks the installed leanmpi.pc),
# clang-format (the format check, tools/format.sh) and iproute2 (ip and tc
# for the virtual cluster of the multinode tests, tools/vcluster). libfabric
# is the network transport's (jobs across hosts); the build works without it.
# libpmix-dev gives the PMIx client its header (libpmix is loaded only under
# a PMIx launcher); mpich and openmpi-bin bring the launchers the tests of
# tests/foreign run programs under (Hydra, Open MPI 4.1's mpirun), and with
# libmpich-dev and libopenmpi-dev the compiler wrappers that build
# leanmpi-profile and a test program for them (tests/profile);
# slurmctld, slurmd and slurm-client the one-node Slurm those tests start
# (tools/slurmbed) to run programs under srun.
DEBIAN_PACKAGES = gcc make cmake ninja-build pkg-config python3 python3-venv clang-format iproute2 libfabric-dev \
                  libpmix-dev mpich openmpi-bin libmpich-dev libopenmpi-dev slurmctld slurmd slurm-client
deps:
	@missing=""; \
	for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@sh tools/demo.sh $(BUILD)

check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)

# Apply .clang-format to every hand-written C file.
format:
	sh tools/format.sh

-include mk/regen.mk
-include mk/bench.mk
-include mk/mpi4py.mk
