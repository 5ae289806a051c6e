# Unit test of the one-sided engine's lock (included by the unit tests'
# CMakeLists): the lock between threads, built from its own source.
add_executable(test_mcs_rwlock ${CMAKE_CURRENT_LIST_DIR}/test_mcs_rwlock.c
                               ${CMAKE_CURRENT_LIST_DIR}/../../src/osc/mcs_rwlock.c)
target_include_directories(test_mcs_rwlock PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../../src
                                                   ${CMAKE_CURRENT_LIST_DIR}/../../include)
target_link_libraries(test_mcs_rwlock PRIVATE Threads::Threads)
add_test(NAME unit.mcs_rwlock COMMAND test_mcs_rwlock)
set_tests_properties(unit.mcs_rwlock PROPERTIES TIMEOUT 180 LABELS "unit;rma")
