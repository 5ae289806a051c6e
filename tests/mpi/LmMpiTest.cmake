# lm_add_mpi_test(NAME name SOURCES src... | PROGRAM other_name  [NPROCS 1 2 3 4 8]
#                 [EXPECT_FAIL_REGEX regex] [EXPECT_EXIT_CODE n]
#                 [TIMEOUT seconds] [LABELS label...] [ENV VAR=value...]
#                 [MPIRUN_ARGS arg...] [MEMORY_LIMIT_MB n] [RESOURCE_LOCK name])
#
# Builds one MPI program against the `leanmpi` library and registers it with
# CTest once per process count as mpi.<name>.np<N>, launched by LeanMPI's
# mpirun.  A plain test passes when it exits 0 and prints a PASS or SKIP line
# and no FAIL line.  EXPECT_EXIT_CODE and/or EXPECT_FAIL_REGEX turn it into an
# expected-failure test: it passes when the job ends with that exit code (any
# non-zero code when only the regex is given) and its output matches the regex.
# Every run goes through run_expect.py, which kills the process group on timeout.
# ENV sets environment variables for the job (mpirun passes them to every
# rank); a second registration of one source with other settings needs its
# own NAME, and PROGRAM reuses that other test's executable instead of
# building the sources again. MPIRUN_ARGS go to mpirun before -n.
# MEMORY_LIMIT_MB caps the address space of mpirun and of every rank, so
# that a program whose memory grows where it must not fails instead of
# swapping; RESOURCE_LOCK keeps tests that share a resource (much memory)
# from running at the same time.
set(LM_MPI_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
if(NOT DEFINED LM_MPIRUN)
  set(LM_MPIRUN ${CMAKE_BINARY_DIR}/bin/mpirun CACHE FILEPATH "Launcher used by the MPI program tests")
endif()
find_package(Python3 COMPONENTS Interpreter QUIET)

function(lm_add_mpi_test)
  cmake_parse_arguments(T "NO_SHM_LEFTOVERS"
                        "NAME;PROGRAM;EXPECT_FAIL_REGEX;EXPECT_EXIT_CODE;TIMEOUT;MEMORY_LIMIT_MB;RESOURCE_LOCK"
                        "SOURCES;NPROCS;LABELS;ENV;MPIRUN_ARGS" ${ARGN})
  if(NOT T_NAME OR (NOT T_SOURCES AND NOT T_PROGRAM))
    message(FATAL_ERROR "lm_add_mpi_test: NAME and SOURCES (or PROGRAM) are required")
  endif()
  if(NOT T_NPROCS)
    set(T_NPROCS 1 2 3 4 8)
  endif()
  if(T_PROGRAM)
    set(tgt mpitest_${T_PROGRAM})
  else()
    set(tgt mpitest_${T_NAME})
    add_executable(${tgt} ${T_SOURCES})
    set_target_properties(${tgt} PROPERTIES OUTPUT_NAME ${T_NAME}
                          RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/mpi)
    target_include_directories(${tgt} PRIVATE ${LM_MPI_TEST_DIR})
    target_link_libraries(${tgt} leanmpi)
  endif()

  set(expect)
  if(DEFINED T_EXPECT_EXIT_CODE)
    list(APPEND expect --exit-code ${T_EXPECT_EXIT_CODE})
  elseif(DEFINED T_EXPECT_FAIL_REGEX)
    list(APPEND expect --nonzero)
  else()
    list(APPEND expect --exit-code 0 --regex "^(PASS|SKIP)" --forbid "^FAIL")
  endif()
  if(DEFINED T_EXPECT_FAIL_REGEX)
    # An expected failure must still not be a failed check of the program.
    list(APPEND expect --regex "${T_EXPECT_FAIL_REGEX}" --forbid "^FAIL")
  endif()

  if(T_NO_SHM_LEFTOVERS)
    list(APPEND expect --no-shm-leftovers)
  endif()
  if(T_MEMORY_LIMIT_MB)
    list(APPEND expect --memory-limit-mb ${T_MEMORY_LIMIT_MB})
  endif()
  # The same run at 2 and 4 ranks with the ranks in one address space
  # (mpirun --address-space=shared, docs/SHARED_ADDRESS_SPACE.md), as
  # mpi.<name>.shared.np<N>, label shared_space: every test that expects
  # success, unless it caps each process's memory (one address space then
  # holds every rank's) or uses more than one node's ranks.
  set(shared_nps "")
  if(NOT DEFINED T_EXPECT_EXIT_CODE AND NOT DEFINED T_EXPECT_FAIL_REGEX AND NOT T_MEMORY_LIMIT_MB
     AND NOT T_MPIRUN_ARGS AND NOT "dpm" IN_LIST T_LABELS)
    foreach(np 2 4)
      if(np IN_LIST T_NPROCS)
        list(APPEND shared_nps shared${np})
      endif()
    endforeach()
  endif()
  foreach(run IN LISTS T_NPROCS shared_nps)
    string(REGEX REPLACE "^shared" "" np ${run})
    set(mode ${T_MPIRUN_ARGS})
    set(labels "mpi;${T_LABELS}")
    set(tname mpi.${T_NAME}.np${np})
    if(run MATCHES "^shared")
      set(mode --address-space=shared)
      set(labels "mpi;shared_space;${T_LABELS}")
      set(tname mpi.${T_NAME}.shared.np${np})
    endif()
    if(T_TIMEOUT)
      set(to ${T_TIMEOUT})
    elseif(np GREATER_EQUAL 8)
      set(to 120)
    else()
      set(to 60)
    endif()
    add_test(NAME ${tname}
             COMMAND ${Python3_EXECUTABLE} ${LM_MPI_TEST_DIR}/run_expect.py
                     --timeout ${to} ${expect}
                     -- ${LM_MPIRUN} ${mode} -n ${np} $<TARGET_FILE:${tgt}>)
    # CTest's own limit is a little longer so that run_expect.py reports.
    math(EXPR ctest_to "${to} + 15")
    set_tests_properties(${tname} PROPERTIES TIMEOUT ${ctest_to} LABELS "${labels}" PROCESSORS ${np})
    if(T_ENV)
      set_tests_properties(${tname} PROPERTIES ENVIRONMENT "${T_ENV}")
    endif()
    if(T_RESOURCE_LOCK)
      set_tests_properties(${tname} PROPERTIES RESOURCE_LOCK ${T_RESOURCE_LOCK})
    endif()
  endforeach()
endfunction()
