# mpi4py's own test suite against LeanMPI, as a real client.
#
#   make check-mpi4py   the whole suite at 1, 2, 3 and 4 processes (MPI4PY_NP),
#                       each module in its own job limited to MPI4PY_TIMEOUT s; writes
#                       docs/MPI4PY.md (counts per process count and module)
#
# mpi4py is fetched from PyPI and built with this tree's mpicc into
# $(BUILD)/mpi4py/venv the first time (a few minutes); `make check` runs the
# modules of tests/mpi4py/selection.txt through CTest (label mpi4py).
MPI4PY_NP ?= 1 2 3 4
MPI4PY_TIMEOUT ?= 60

.PHONY: check-mpi4py
check-mpi4py: build
	python3 tests/mpi4py/mpi4py_suite.py --build-dir $(BUILD) --np $(MPI4PY_NP) --timeout $(MPI4PY_TIMEOUT) \
	    --summary $(BUILD)/mpi4py/summary.json --markdown docs/MPI4PY.md
