#!/bin/sh
# Installation test: `cmake --install` into a fresh prefix gives a usable MPI.
#   - the installed mpicc builds a program and the installed mpirun runs it;
#   - pkg-config finds leanmpi through the installed .pc file;
#   - CMake's FindMPI, pointed at the installed mpicc, configures, builds and
#     runs a project;
#   - the installation is relocatable: moved (mv) elsewhere, every installed
#     program still runs without LD_LIBRARY_PATH, and the moved mpicc and
#     mpirun build and run a program.
# Usage: test_install.sh <build-dir> <source-dir>
# The prefix is a fresh directory outside the build tree (removed on success),
# so that any path leaking from the build tree into the installation shows.
set -eu
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
# (Not named after the library: the launcher tests, which may run at the
# same time, look for leftover files with "leanmpi" in their names.)
# Physical path: the installed wrappers report their prefix with links resolved.
scratch=$(cd "$(mktemp -d "${TMPDIR:-/tmp}/lminstall.XXXXXX")" && pwd -P)
prefix=$scratch/prefix
fail() { echo "FAIL install: $*"; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$scratch/install.log" 2>&1 \
    || { cat "$scratch/install.log"; fail "cmake --install"; }
for f in bin/mpicc bin/mpicxx bin/mpirun bin/mpiexec bin/leanmpi-info include/mpi.h \
         bin/acpcc bin/acprun include/acp.h; do
    [ -e "$prefix/$f" ] || fail "$f missing from the installation"
done
ls "$prefix"/lib*/libleanmpi.so* >/dev/null 2>&1 || fail "libleanmpi.so missing"
ls "$prefix"/lib*/libacp.so >/dev/null 2>&1 || fail "libacp.so (the ACP library's name) missing"
pc=$(ls "$prefix"/lib*/pkgconfig/leanmpi.pc 2>/dev/null | head -n 1)
[ -n "$pc" ] || fail "leanmpi.pc missing"

# The installed wrapper points into the installation, not the build tree.
show=$("$prefix/bin/mpicc" -show x.c)
case "$show" in
    *"-I$prefix/include"*"-L$prefix/lib"*) ;;
    *) fail "installed mpicc -show does not use the prefix: $show" ;;
esac
case "$show" in
    *"-I$build/"*|*"-L$build/lib"*|*"-I$src/"*) fail "installed mpicc refers to the build tree: $show" ;;
esac

cat >"$scratch/ring.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, size, token = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (rank == 0) {
        token = 42;
        MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("ring token %d after %d ranks\n", token, size);
    } else {
        MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token++;
        MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
C

# 1. Installed wrapper and launcher.
"$prefix/bin/mpicc" "$scratch/ring.c" -o "$scratch/ring_wrapper" || fail "installed mpicc"
out=$("$prefix/bin/mpirun" -n 3 "$scratch/ring_wrapper") || fail "installed mpirun"
[ "$out" = "ring token 44 after 3 ranks" ] || fail "ring through the installed mpirun printed '$out'"

# an ACP program through the installed acpcc (-lacp) and acprun
cat >"$scratch/acp_ring.c" <<'C'
#include <acp.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    acp_init(&argc, &argv);
    int me = acp_rank(), n = acp_procs();
    acp_complete(acp_add4(acp_query_starter_ga(me) + 4, acp_query_starter_ga(0), 1, ACP_HANDLE_NULL));
    acp_sync();
    if (me == 0) printf("acp counter %u after %d processes\n", *(unsigned *)acp_query_address(acp_query_starter_ga(0)), n);
    return acp_finalize();
}
C
"$prefix/bin/acpcc" "$scratch/acp_ring.c" -o "$scratch/acp_ring" || fail "installed acpcc"
out=$("$prefix/bin/acprun" -np 3 "$scratch/acp_ring") || fail "installed acprun"
[ "$out" = "acp counter 3 after 3 processes" ] || fail "the ACP program printed '$out'"

# 2. pkg-config.
if command -v pkg-config >/dev/null 2>&1; then
    export PKG_CONFIG_PATH="$(dirname "$pc")"
    cflags=$(pkg-config --cflags leanmpi) || fail "pkg-config --cflags leanmpi"
    libs=$(pkg-config --libs leanmpi) || fail "pkg-config --libs leanmpi"
    # shellcheck disable=SC2086
    cc $cflags "$scratch/ring.c" -o "$scratch/ring_pc" $libs -Wl,-rpath,"$(dirname "$(dirname "$pc")")" \
        || fail "build with pkg-config flags ($cflags / $libs)"
    out=$("$prefix/bin/mpirun" -n 2 "$scratch/ring_pc") || fail "run of the pkg-config build"
    [ "$out" = "ring token 43 after 2 ranks" ] || fail "pkg-config build printed '$out'"
else
    echo "SKIP pkg-config part: pkg-config is not installed"
fi

# 3. CMake FindMPI through the wrapper.
mkdir -p "$scratch/cmake_project"
cp "$scratch/ring.c" "$scratch/cmake_project/ring.c"
cat >"$scratch/cmake_project/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(ring C)
find_package(MPI REQUIRED COMPONENTS C)
add_executable(ring ring.c)
target_link_libraries(ring PRIVATE MPI::MPI_C)
CM
cmake -S "$scratch/cmake_project" -B "$scratch/cmake_build" -DMPI_C_COMPILER="$prefix/bin/mpicc" \
    -DMPIEXEC_EXECUTABLE="$prefix/bin/mpiexec" >"$scratch/cmake.log" 2>&1 \
    || { cat "$scratch/cmake.log"; fail "FindMPI with the installed mpicc"; }
grep -q "Found MPI_C" "$scratch/cmake.log" || { cat "$scratch/cmake.log"; fail "FindMPI did not report MPI_C"; }
cmake --build "$scratch/cmake_build" >"$scratch/cmake_build.log" 2>&1 \
    || { cat "$scratch/cmake_build.log"; fail "build of the FindMPI project"; }
out=$("$prefix/bin/mpiexec" -n 4 "$scratch/cmake_build/ring") || fail "run of the FindMPI build"
[ "$out" = "ring token 45 after 4 ranks" ] || fail "FindMPI build printed '$out'"

# 4. Relocation: move the whole prefix (the old path then no longer exists)
# and use it from there. Nothing may come from LD_LIBRARY_PATH: the programs
# find libleanmpi through their own run path ($ORIGIN/...), the wrappers
# find the prefix from their own location.
unset LD_LIBRARY_PATH
mkdir -p "$scratch/elsewhere"
mv "$prefix" "$scratch/elsewhere/moved" || fail "mv of the prefix"
moved=$scratch/elsewhere/moved
[ ! -e "$prefix" ] || fail "the old prefix still exists after mv"

out=$("$moved/bin/leanmpi-info" 2>&1) || fail "moved leanmpi-info: $out"
case "$out" in
    "LeanMPI "*) ;;
    *) fail "moved leanmpi-info printed '$out'" ;;
esac
out=$("$moved/bin/leanmpi-info" --params 2>&1) || fail "moved leanmpi-info --params: $out"
case "$out" in
    *LEANMPI_EAGER_LIMIT*) ;;
    *) fail "moved leanmpi-info --params printed '$out'" ;;
esac
if command -v ldd >/dev/null 2>&1; then
    # leanmpi-info carries the library's objects (it asks internal tables
    # the library does not export): no libleanmpi, from anywhere, that a
    # move could lose or a system-wide copy could replace.
    if lib=$(ldd "$moved/bin/leanmpi-info" | grep libleanmpi); then
        fail "moved leanmpi-info loads a libleanmpi: $lib"
    fi
fi
for launcher in mpirun mpiexec; do
    out=$("$moved/bin/$launcher" --help 2>&1) || fail "moved $launcher --help: $out"
    case "$out" in
        "Usage: $launcher "*) ;;
        *) fail "moved $launcher --help printed '$out'" ;;
    esac
done
for wrapper in mpicc mpicxx; do
    show=$("$moved/bin/$wrapper" -show x.c) || fail "moved $wrapper -show"
    case "$show" in
        *"-I$moved/include"*"-L$moved/lib"*"-Wl,-rpath,$moved/lib"*) ;;
        *) fail "moved $wrapper -show does not use the moved prefix: $show" ;;
    esac
    case "$show" in
        *"$prefix/"*) fail "moved $wrapper -show refers to the old prefix: $show" ;;
    esac
done
"$moved/bin/mpicc" "$scratch/ring.c" -o "$scratch/ring_moved" || fail "moved mpicc"
out=$("$moved/bin/mpirun" -n 2 "$scratch/ring_moved") || fail "moved mpirun"
[ "$out" = "ring token 43 after 2 ranks" ] || fail "ring through the moved mpirun printed '$out'"

rm -rf "$scratch"
echo "PASS install: wrapper, launcher, pkg-config and FindMPI work from the installed prefix, and from it moved elsewhere"
