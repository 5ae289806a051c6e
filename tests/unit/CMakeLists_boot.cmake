# Unit tests of the node segment and its KVS (included by the unit tests'
# CMakeLists). They need only leanmpi_segment.
foreach(t kvs node_segment)
  add_executable(test_${t} ${CMAKE_CURRENT_LIST_DIR}/test_${t}.c)
  target_link_libraries(test_${t} PRIVATE leanmpi_segment)
  add_test(NAME unit.${t} COMMAND test_${t})
  set_tests_properties(unit.${t} PROPERTIES TIMEOUT 60 LABELS unit)
endforeach()
