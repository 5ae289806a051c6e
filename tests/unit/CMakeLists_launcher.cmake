# Unit tests of the launcher's pieces for jobs across hosts (frame link,
# job description, tree shape, host lists) and of its broker for dynamic
# processes; they need only libc.
set(LM_LAUNCHER_SRC ${CMAKE_CURRENT_LIST_DIR}/../../src/launcher)
add_executable(test_launcher_parts ${CMAKE_CURRENT_LIST_DIR}/test_launcher_parts.c
  ${LM_LAUNCHER_SRC}/agent_link.c ${LM_LAUNCHER_SRC}/agent_tree.c ${LM_LAUNCHER_SRC}/hosts.c
  ${LM_LAUNCHER_SRC}/broker.c)
target_link_libraries(test_launcher_parts PRIVATE leanmpi_segment)
target_include_directories(test_launcher_parts PRIVATE ${LM_LAUNCHER_SRC} ${CMAKE_CURRENT_LIST_DIR}/../../src
  ${CMAKE_CURRENT_LIST_DIR}/../../include)
add_test(NAME unit.launcher_parts COMMAND test_launcher_parts)
set_tests_properties(unit.launcher_parts PROPERTIES TIMEOUT 60 LABELS "unit;launcher")

