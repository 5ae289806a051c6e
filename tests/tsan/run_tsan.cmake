# Configures a ThreadSanitizer tree (LEANMPI_TSAN), builds the library, the
# launcher and a few MPI test programs, runs those tests, and fails on any
# ThreadSanitizer report, also one printed by a test that passed.
#
#   cmake -DSOURCE_DIR=... -DBINARY_DIR=... -DGENERATOR=... -DMAKE_PROGRAM=...
#         -DC_COMPILER=... -DCTEST=... -DSUPPORTED=ON|OFF -DSUPPRESSIONS=...
#         -P run_tsan.cmake
cmake_minimum_required(VERSION 3.18)

if(NOT SUPPORTED)
  message("tsan: skipped: ${C_COMPILER} cannot link -fsanitize=thread (is libtsan installed?)")
  return()
endif()

set(LM_TREE_NAME tsan)
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/InstrumentedTree.cmake)
set(jobs ${LM_TREE_JOBS})

# The threaded test at 2, 3 and 4 ranks (each rank runs six threads), and basic
# single-threaded traffic: blocking and nonblocking point-to-point, probes,
# communicator construction.
set(tests threads_multiple p2p_blocking p2p_wait p2p_probe comm_basic)
set(runs "threads_multiple\\.np[234]|p2p_blocking\\.np2|p2p_wait\\.np2|p2p_probe\\.np2|comm_basic\\.np2")

# Reports end the process with a non-zero status (exitcode), so the test
# that ran it fails; the suppressions file says why each entry is there.
# Set here so that settings in the caller's environment cannot weaken it.
set(ENV{TSAN_OPTIONS}
    "halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=${SUPPRESSIONS}")

set(targets leanmpi mpirun)
foreach(t IN LISTS tests)
  list(APPEND targets mpitest_${t})
endforeach()
lm_tree_configure_and_build(LEANMPI_TSAN=ON ${targets})

# Some kernels randomize mmap more than the ThreadSanitizer runtime can
# handle; it then refuses to start at all.  That is reported as a skip, not
# as a finding.
execute_process(
  COMMAND ${BINARY_DIR}/bin/mpirun --version
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 60)
if(out MATCHES "ThreadSanitizer: unexpected memory mapping|FATAL: ThreadSanitizer")
  message("tsan: skipped: the ThreadSanitizer runtime cannot run on this kernel:\n${out}")
  return()
elseif(NOT rc EQUAL 0)
  message("${out}")
  message(FATAL_ERROR "tsan: a ThreadSanitizer program does not run here: ${rc}")
endif()

set(log ${BINARY_DIR}/Testing/Temporary/LastTest.log)
file(REMOVE ${log})
execute_process(
  COMMAND ${CTEST} --output-on-failure --no-tests=error -j ${jobs} --timeout 180
          -R "^mpi\\.(${runs})$"
  WORKING_DIRECTORY ${BINARY_DIR}
  RESULT_VARIABLE rc)
step("tests run")

set(report_re "WARNING: ThreadSanitizer|ERROR: ThreadSanitizer|ThreadSanitizer: reported")
lm_tree_check_reports(${log} "${report_re}" "${rc}")
