# lm_add_instrumented_tree(TEST name LABEL label FLAGS flags DIR subdir
#                          SCRIPT script TIMEOUT seconds [ARGS -Dvar=value...])
#
# Registers a test that builds and tests a second tree instrumented with
# FLAGS (run by SCRIPT, see InstrumentedTree.cmake) in <build>/DIR. Without
# the sanitizer runtime the compiler cannot link FLAGS: the test then reports
# itself skipped ("<label>: skipped") instead of failing on an environment it
# cannot change. The sub-run builds and tests with every core, so CTest runs
# nothing beside it (other tests' timing checks would be starved).
include(CheckCSourceCompiles)
include(ProcessorCount)

function(lm_add_instrumented_tree)
  cmake_parse_arguments(T "" "TEST;LABEL;FLAGS;DIR;SCRIPT;TIMEOUT" "ARGS" ${ARGN})
  set(CMAKE_REQUIRED_FLAGS "${T_FLAGS}")
  set(CMAKE_REQUIRED_LINK_OPTIONS "${T_FLAGS}")
  set(CMAKE_REQUIRED_QUIET ON)
  string(MAKE_C_IDENTIFIER "LM_CAN_LINK_${T_FLAGS}" have)
  check_c_source_compiles("int main(void) { return 0; }" ${have})
  if(NOT ${have})
    message(STATUS "${CMAKE_C_COMPILER} cannot link ${T_FLAGS}: the ${T_LABEL} test will be skipped")
  endif()
  ProcessorCount(jobs)
  if(jobs LESS 1)
    set(jobs 2)
  endif()
  add_test(NAME ${T_TEST}
           COMMAND ${CMAKE_COMMAND}
                   -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
                   -DBINARY_DIR=${CMAKE_BINARY_DIR}/${T_DIR}
                   "-DGENERATOR=${CMAKE_GENERATOR}"
                   -DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
                   -DC_COMPILER=${CMAKE_C_COMPILER}
                   -DCTEST=${CMAKE_CTEST_COMMAND}
                   -DSUPPORTED=${${have}}
                   ${T_ARGS}
                   -P ${T_SCRIPT})
  set_tests_properties(${T_TEST} PROPERTIES
    LABELS ${T_LABEL} TIMEOUT ${T_TIMEOUT} PROCESSORS ${jobs}
    SKIP_REGULAR_EXPRESSION "${T_LABEL}: skipped")
endfunction()
