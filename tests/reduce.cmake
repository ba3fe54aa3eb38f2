# The reduce plugin on the CPU path: loads the built plugin with dlopen.
kbench_test(test_reduce SOURCES test_reduce.c LIBRARIES ${CMAKE_DL_LIBS} m)
add_dependencies(test_reduce kbench_reduce_plugin)

# The same plugin built with KBR_TEST_DROP_LAST: its cpu variant misses the
# last element, and test_reduce checks that verify() catches it.  Never
# installed; it lives with the other fixtures.
kbench_add_plugin(kbench_reduce_drop_last NO_INSTALL
  OUTPUT_DIRECTORY ${KBENCH_FIXTURE_DIR}/reduce
  SOURCES ${PROJECT_SOURCE_DIR}/plugins/reduce/reduce.c $<TARGET_OBJECTS:kbench_reduce_cuda>
  LIBRARIES CUDA::cudart Threads::Threads m)
set_target_properties(kbench_reduce_drop_last PROPERTIES OUTPUT_NAME reduce-drop-last
  LINKER_LANGUAGE CUDA)
target_compile_definitions(kbench_reduce_drop_last PRIVATE KBR_TEST_DROP_LAST=1)
add_dependencies(test_reduce kbench_reduce_drop_last)
