# Regenerate the MPI interface from the MPI standard's API description.
# The generated files are committed, so builds never need this.
#   make -f mk/regen.mk regen      (or include this file from a Makefile)
REGEN_VENV ?= .venv

$(REGEN_VENV)/bin/python:
	python3 -m venv $(REGEN_VENV)
	$(REGEN_VENV)/bin/pip install -r tools/gen/requirements.txt

.PHONY: regen
regen: $(REGEN_VENV)/bin/python
	$(REGEN_VENV)/bin/python tools/gen/gen_mpi.py
