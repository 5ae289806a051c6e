# Configures and builds a sanitized tree (LEANMPI_SANITIZE: every target,
# test programs and mpirun included, is compiled and linked with
# -fsanitize=address,undefined), runs its tests, and fails on any sanitizer
# report, also one printed by a test that passed.
#
#   cmake -DSOURCE_DIR=... -DBINARY_DIR=... -DGENERATOR=... -DMAKE_PROGRAM=...
#         -DC_COMPILER=... -DCTEST=... -DSUPPORTED=ON|OFF -P run_sanitize.cmake
cmake_minimum_required(VERSION 3.18)

if(NOT SUPPORTED)
  message("sanitize: skipped: ${C_COMPILER} cannot link -fsanitize=address,undefined "
          "(are libasan and libubsan installed?)")
  return()
endif()

set(LM_TREE_NAME sanitize)
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/InstrumentedTree.cmake)
set(jobs ${LM_TREE_JOBS})

# Any finding ends the process with a non-zero status, so the test that ran
# it fails.  Stack use after return is checked because blocking calls keep
# their request on the stack: one left queued after the call returned would
# show up there.  The options are set here, and LSAN_OPTIONS set to the
# suppressions of lsan.supp only (memory that libfabric itself keeps), so
# that settings in the caller's environment cannot weaken the run.
set(asan_options "detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1")
set(asan_options "${asan_options}:halt_on_error=1:abort_on_error=0:exitcode=1")
set(ENV{ASAN_OPTIONS} "${asan_options}")
set(ENV{UBSAN_OPTIONS} "halt_on_error=1:print_stacktrace=1")
set(ENV{LSAN_OPTIONS} "suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp:print_suppressions=0")

# -O1: the optimisation ASan is tuned for (much faster than -O0, stacks still
# readable).  The toolchain is the caller's, so both trees are comparable.
lm_tree_configure_and_build(LEANMPI_SANITIZE=ON)

# LeakSanitizer stops the process's threads with ptrace; where ptrace is not
# allowed (inside a debugger, some containers) every process would end with
# "LeakSanitizer has encountered a fatal error".  Leak checking is then
# turned off, with a warning in this test's output, and the rest of the run
# still counts.  A program that
# cannot start at all (sanitizer runtime and kernel at odds) fails here once
# instead of in every test.
execute_process(
  COMMAND ${BINARY_DIR}/bin/mpirun --version
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 60)
if(out MATCHES "LeakSanitizer has encountered a fatal error")
  message("sanitize: WARNING: LeakSanitizer does not work here (ptrace refused?): "
          "leak checking is off for this run")
  set(ENV{ASAN_OPTIONS} "${asan_options}:detect_leaks=0")
elseif(NOT rc EQUAL 0)
  message("${out}")
  message(FATAL_ERROR "sanitize: a sanitized program does not run here: ${rc}")
endif()

# What is left out, and why:
#  - tools (pytest of the Python benchmark harness): no C code is run.
#  - mpi4py: Python loads the library, and the ASan runtime would have to
#    come first in that process; mpi4py is a client check, run unsanitized.
#  - install: programs that the installed wrappers build are not sanitized,
#    and a sanitized libleanmpi.so needs the ASan runtime loaded first.
#  - the launcher's failure cases: they end jobs with signals (ranks killed
#    that way never reach the leak check) and check a 2-second teardown that
#    the sanitizers' slowdown would make flaky; segfault and mpi_segv store
#    through a null pointer on purpose, which UBSan reports.  Their normal
#    paths (startup, I/O forwarding, exit) still run under the sanitized
#    mpirun in the other launcher cases.
#  - the forced-algorithm collective runs at other than 3 and 4 processes.
#  - across hosts: the launcher's failure cases (as above), the runs on a
#    virtual cluster (they repeat the runs by host name, and share one lock),
#    and of the MPI programs by host name all but the point-to-point ones
#    that cover the network transport's paths (first contact, order, large
#    messages): p2p_blocking and p2p_order* at both shapes, and rma_spread
#    (windows over several hosts) at its three.
set(skip_launcher
  exit_status segfault abort abort_code_clipped no_finalize sigterm_ignored
  rank_killed_from_outside sigint_launcher sigterm_launcher sighup_launcher
  launcher_sigkilled timeout mpi_abort mpi_segv)
string(REPLACE ";" "|" skip_launcher "${skip_launcher}")
set(skip "^launcher\\.(${skip_launcher})$")
string(APPEND skip "|^launcher\\.hosts\\.(rank_fails|agent_killed|interrupt|timeout|unreachable)$|^multinode\\.")
string(APPEND skip "|^mpi\\.hosts\\.([^pr]|p[^2]|p2p_[^bo]|r[^m]|rma_[^s])")
# Each forced collective algorithm runs at 3 and 4 processes here (a
# non-power-of-two and a power-of-two size); the plain suite runs it at all.
string(APPEND skip "|^mpi\\.coll_(data|reduce)_.*\\.np(1|2|5|7|8)$")
# Preloading a library (LD_PRELOAD) puts it before the sanitizer's runtime,
# which AddressSanitizer refuses; ranks in one address space are not run
# under it (label shared_space).
string(APPEND skip "|^profile\\.(preload|shared)\\.")
set(log ${BINARY_DIR}/Testing/Temporary/LastTest.log)
file(REMOVE ${log})
execute_process(
  COMMAND ${CTEST} --output-on-failure --no-tests=error -j ${jobs} --timeout 120
          -LE "^(tools|install|mpi4py|shared_space)$" -E "${skip}"
  WORKING_DIRECTORY ${BINARY_DIR}
  RESULT_VARIABLE rc)
step("tests run")

# A job that is expected to fail (MPI_Abort, a fatal error handler) passes on
# its exit status and message alone, which would hide a report; so every
# test's output is searched as well.
set(report_re "(ERROR|WARNING): (Address|Leak|UndefinedBehavior)Sanitizer|: runtime error: |Sanitizer:DEADLYSIGNAL")
lm_tree_check_reports(${log} "${report_re}" "${rc}")
