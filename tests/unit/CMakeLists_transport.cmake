# Transport unit tests. They run the transport between forked processes on
# an anonymous shared mapping (tests/unit/transport_harness.h), so they need
# neither the launcher nor boot; core services come from stub_core.c.
set(LM_TRANSPORT_ROOT ${CMAKE_CURRENT_LIST_DIR}/../..)

add_library(lm_transport_testlib STATIC
  ${LM_TRANSPORT_ROOT}/src/transport/transport.c
  ${LM_TRANSPORT_ROOT}/src/transport/self.c
  ${LM_TRANSPORT_ROOT}/src/transport/shm.c
  ${LM_TRANSPORT_ROOT}/src/transport/shm_queue.c
  ${LM_TRANSPORT_ROOT}/src/transport/shm_layout.c
  ${LM_TRANSPORT_ROOT}/src/transport/shm_arena.c
  ${LM_TRANSPORT_ROOT}/src/transport/shm_rma.c
  ${LM_TRANSPORT_ROOT}/src/transport/fastbox.c
  ${LM_TRANSPORT_ROOT}/src/transport/cma.c
  ${LM_TRANSPORT_ROOT}/src/transport/ofi.c
  ${LM_TRANSPORT_ROOT}/src/transport/tcp.c
  ${LM_TRANSPORT_ROOT}/src/transport/mr_cache.c
  ${LM_TRANSPORT_ROOT}/src/util/lm_hashmap.c
  ${LM_TRANSPORT_ROOT}/tests/unit/stub_core.c)
target_include_directories(lm_transport_testlib PUBLIC
  ${LM_TRANSPORT_ROOT}/include ${LM_TRANSPORT_ROOT}/src ${LM_TRANSPORT_ROOT}/tests/unit)
target_compile_definitions(lm_transport_testlib PRIVATE LM_HAVE_OFI=${LM_HAVE_OFI})
if(LM_HAVE_OFI)
  target_include_directories(lm_transport_testlib PRIVATE ${LIBFABRIC_INCLUDE_DIRS})
endif()
target_link_libraries(lm_transport_testlib PUBLIC ${CMAKE_DL_LIBS})

foreach(t hashmap shm_queue fastbox transport_shm transport_cma transport_rma mr_cache)
  add_executable(test_${t} ${LM_TRANSPORT_ROOT}/tests/unit/test_${t}.c)
  target_link_libraries(test_${t} PRIVATE lm_transport_testlib)
  add_test(NAME unit_${t} COMMAND test_${t})
  # Every child also arms alarm(); this is the outer guard.
  set_tests_properties(unit_${t} PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 LABELS "unit;transport")
endforeach()
