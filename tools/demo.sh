#!/bin/sh
# The showcase: hello on 4 ranks, ping-pong latency and bandwidth on 2 ranks,
# the memory report of that run, and a collective decomposed into the
# point-to-point messages it sends.
set -e
BUILD=${1:-build}
BIN=$BUILD/bin
OUT=$BUILD/demo
mkdir -p "$OUT"
$BIN/mpicc -O2 -o "$OUT/hello" examples/hello.c
$BIN/mpicc -O2 -o "$OUT/pingpong" examples/pingpong.c
echo "== hello on 4 ranks"
$BIN/mpirun -n 4 "$OUT/hello"
echo "== ping-pong on 2 ranks (latency: half round trip; bandwidth: one direction)"
LEANMPI_MEMREPORT=1 $BIN/mpirun -n 2 "$OUT/pingpong"
echo "== MPI_Alltoall by Bruck on 8 ranks, 10-byte blocks: bytes between each pair"
$BIN/leanmpi-info --decompose alltoall --np 8 --bytes 10 --algorithm bruck | tail -8
echo "== what this build implements"
$BIN/leanmpi-info | head -3
