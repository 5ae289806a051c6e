# Shared by the scripts that build and test a second, instrumented tree
# (tests/sanitize/run_sanitize.cmake, tests/tsan/run_tsan.cmake): timing
# lines, configuring and building the tree, and finding sanitizer reports in
# the tests' output (a report from a test that passed must fail the run too).
#
# The including script sets LM_TREE_NAME (the prefix of its messages) and
# the variables its -D options pass: SOURCE_DIR, BINARY_DIR, GENERATOR,
# MAKE_PROGRAM, C_COMPILER.

include(ProcessorCount)
ProcessorCount(LM_TREE_JOBS)
if(LM_TREE_JOBS LESS 1)
  set(LM_TREE_JOBS 2)
endif()
string(TIMESTAMP LM_TREE_STARTED "%s")

# "<name>: <what> (<seconds since the start> s)"
function(step what)
  string(TIMESTAMP now "%s")
  math(EXPR t "${now} - ${LM_TREE_STARTED}")
  message("${LM_TREE_NAME}: ${what} (${t} s)")
endfunction()

# Configure BINARY_DIR with the given option (e.g. LEANMPI_SANITIZE=ON) at
# -O1 -g, then build the given targets (all when none are given).
function(lm_tree_configure_and_build option)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -G "${GENERATOR}"
            -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM} -DCMAKE_C_COMPILER=${C_COMPILER}
            -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-O1 -g"
            -D${option} -DBUILD_TESTING=ON
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 300)
  if(NOT rc EQUAL 0)
    message("${out}")
    message(FATAL_ERROR "${LM_TREE_NAME}: configuring ${BINARY_DIR} failed: ${rc}")
  endif()
  step("configured ${BINARY_DIR}")
  set(targets)
  if(ARGN)
    set(targets --target ${ARGN})
  endif()
  execute_process(
    COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} --parallel ${LM_TREE_JOBS} ${targets}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 600)
  if(NOT rc EQUAL 0)
    message("${out}")
    message(FATAL_ERROR "${LM_TREE_NAME}: building ${BINARY_DIR} failed: ${rc}")
  endif()
  step("built")
endfunction()

# After ctest ran with exit status rc and wrote log: fail on a non-zero
# status or on any line matching report_re (listed with its test's name).
function(lm_tree_check_reports log report_re rc)
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
    message("${LM_TREE_NAME}: reports (full output in ${log}):\n${found}")
  endif()
  if(NOT rc EQUAL 0 OR found)
    message(FATAL_ERROR "${LM_TREE_NAME}: the instrumented tree's tests failed")
  endif()
  message("${LM_TREE_NAME}: PASS")
endfunction()
