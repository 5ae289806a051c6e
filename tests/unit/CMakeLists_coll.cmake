# Unit tests of the collective schedules through the exported decomposition
# API (included by the unit tests' CMakeLists).
add_executable(test_decompose ${CMAKE_CURRENT_LIST_DIR}/test_decompose.c ${LM_LAYER_OBJECTS})
target_include_directories(test_decompose PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(test_decompose PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
add_test(NAME unit.decompose COMMAND test_decompose)
set_tests_properties(unit.decompose PROPERTIES TIMEOUT 120 LABELS unit)
