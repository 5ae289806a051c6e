#!/usr/bin/env bash
# Build every MPI program test in this folder against the other MPI
# implementations installed on the machine (Open MPI, MPICH) and run each at
# 1, 2, 3, 4 and 8 processes.  Used to check that the tests themselves are
# right: a test that fails on both peers is most likely a wrong test.
#
# Markers read from the first lines of each source file:
#   LMTEST-LEANMPI-ONLY            not run here (behaviour the standard leaves open)
#   LMTEST-EXPECT: <run_expect.py options>   an expected-failure test
#
# Usage: validate_against_peers.sh [-m openmpi|mpich] [-n "1 2 3 4 8"] [test ...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
mpis="openmpi mpich"
nps="1 2 3 4 8"
while getopts "m:n:" o; do
  case $o in m) mpis=$OPTARG ;; n) nps=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then tests="$*"; else
  tests=$(cd "$here" && ls *.c | sed 's/\.c$//')
fi
work=${LMTEST_WORKDIR:-$(mktemp -d /var/tmp/lmtest-peers.XXXXXX)}
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
summary=""
rc_all=0
for mpi in $mpis; do
  case $mpi in
    openmpi) cc=mpicc.openmpi; run="mpirun.openmpi --oversubscribe --allow-run-as-root -n" ;;
    mpich)   cc=mpicc.mpich;   run="mpirun.mpich -n" ;;
    *) echo "unknown MPI $mpi"; exit 2 ;;
  esac
  command -v $cc >/dev/null || { echo "$cc not found, skipping $mpi"; continue; }
  pass=0 fail=0 skip=0 failed=""
  for t in $tests; do
    src=$here/$t.c
    if head -20 "$src" | grep -q LMTEST-LEANMPI-ONLY; then skip=$((skip + 1)); continue; fi
    exe=$work/$mpi/$t
    mkdir -p "$work/$mpi"
    if ! $cc -std=c11 -O2 -g -Wall -I"$here" -o "$exe" "$src" 2>"$exe.build.log"; then
      echo "BUILD FAIL $mpi $t"; cat "$exe.build.log"; fail=$((fail + 1)); failed="$failed $t(build)"; continue
    fi
    expect=$(head -20 "$src" | sed -n 's/.*LMTEST-EXPECT:[[:space:]]*\(.*\)[[:space:]]*\*\/.*/\1/p' | head -1)
    for np in $nps; do
      to=60; [ "$np" -ge 8 ] && to=120
      log=$work/$mpi/$t.np$np.log
      start=$(date +%s.%N)
      if [ -n "$expect" ]; then
        python3 "$here/run_expect.py" --timeout $to $expect -- $run $np "$exe" >"$log" 2>&1
      else
        python3 "$here/run_expect.py" --timeout $to --exit-code 0 --regex '^(PASS|SKIP)' --forbid '^FAIL' -- $run $np "$exe" >"$log" 2>&1
      fi
      r=$?
      el=$(echo "$(date +%s.%N) - $start" | bc)
      if [ $r -eq 0 ]; then pass=$((pass + 1)); printf "ok   %-8s %-26s np=%s %5.1fs\n" $mpi $t $np $el
      else fail=$((fail + 1)); failed="$failed $t.np$np"; rc_all=1
        printf "FAIL %-8s %-26s np=%s %5.1fs (log %s)\n" $mpi $t $np $el "$log"; tail -15 "$log"; fi
    done
  done
  summary="$summary$mpi: $pass passed, $fail failed, $skip LeanMPI-only programs not run${failed:+ (failed:$failed)}\n"
done
printf "\n==== summary ====\n$summary"
exit $rc_all
