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

include(ProcessorCount)
ProcessorCount(jobs)
if(jobs LESS 1)
  set(jobs 2)
endif()
string(TIMESTAMP started "%s")

function(step what)
  string(TIMESTAMP now "%s")
  math(EXPR t "${now} - ${started}")
  message("tsan: ${what} (${t} s)")
endfunction()

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

execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -G "${GENERATOR}"
          -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM} -DCMAKE_C_COMPILER=${C_COMPILER}
          -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-O1 -g"
          -DLEANMPI_TSAN=ON -DBUILD_TESTING=ON
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 300)
if(NOT rc EQUAL 0)
  message("${out}")
  message(FATAL_ERROR "tsan: configuring ${BINARY_DIR} failed: ${rc}")
endif()
step("configured ${BINARY_DIR}")

set(targets leanmpi mpirun)
foreach(t IN LISTS tests)
  list(APPEND targets mpitest_${t})
endforeach()
execute_process(
  COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} --parallel ${jobs} --target ${targets}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 600)
if(NOT rc EQUAL 0)
  message("${out}")
  message(FATAL_ERROR "tsan: building ${BINARY_DIR} failed: ${rc}")
endif()
step("built")

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
set(found "")
if(EXISTS ${log})
  file(STRINGS ${log} lines REGEX "^[0-9]+/[0-9]+ Test: |${report_re}")
  set(test "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9]+/[0-9]+ Test: (.*)")
      set(test "${CMAKE_MATCH_1}")
    else()
      string(APPEND found "  ${test}: ${line}\n")
    endif()
  endforeach()
endif()
if(found)
  message("tsan: ThreadSanitizer reports (full output in ${log}):\n${found}")
endif()
if(NOT rc EQUAL 0 OR found)
  message(FATAL_ERROR "tsan: the ThreadSanitizer tree's tests failed")
endif()
message("tsan: PASS")
