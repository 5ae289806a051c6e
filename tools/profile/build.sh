#!/bin/sh
# Build leanmpi-profile with another MPI's compiler wrapper, e.g.
#   tools/profile/build.sh mpicc.openmpi /tmp/libleanmpi-profile-openmpi.so
# then run that MPI's program with LD_PRELOAD=/tmp/libleanmpi-profile-openmpi.so
set -eu
if [ $# -ne 2 ]; then
    echo "usage: $0 MPICC OUTPUT.so" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
exec "$1" -O2 -fPIC -shared -o "$2" "$here"/leanmpi_profile.c "$here"/profile_neighbor.c \
    "$here"/profile_rma.c "$here"/profile_mpi4.c -lpthread
