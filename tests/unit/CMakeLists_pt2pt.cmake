# Unit tests of point-to-point modules (included by the unit tests'
# CMakeLists).
# The choice between pipes and the single copy by measured cost
# (src/pt2pt/copy_choice.c), from its own source.
add_executable(test_copy_choice ${CMAKE_CURRENT_LIST_DIR}/test_copy_choice.c
                                ${CMAKE_CURRENT_LIST_DIR}/../../src/pt2pt/copy_choice.c)
target_include_directories(test_copy_choice PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../../src)
add_test(NAME unit.copy_choice COMMAND test_copy_choice)
set_tests_properties(unit.copy_choice PROPERTIES TIMEOUT 60 LABELS "unit;pt2pt")
