# Found by convention (tests/CMakeLists.txt includes every plugins/<family>/tests.cmake).
# The transpose plugin on the CPU path: loads the built plugin with dlopen and
# includes transpose.h for the parameter indices and the test extension
# (kbt_test_ext), through which it damages outputs before verify().
kbench_test(test_transpose SOURCES ${CMAKE_CURRENT_LIST_DIR}/tests/test_transpose.c
            LIBRARIES ${CMAKE_DL_LIBS} m)
target_include_directories(test_transpose PRIVATE ${CMAKE_CURRENT_LIST_DIR})
add_dependencies(test_transpose kbench_transpose_plugin)
# The window and vec16-band kernels' tile code (transpose_tile.cuh) run on
# the CPU by an emulator that checks every access: CUDA source, host code
# only, no GPU needed.
kbench_test(test_transpose_emu SOURCES ${CMAKE_CURRENT_LIST_DIR}/tests/test_transpose_emu.cu)
target_include_directories(test_transpose_emu PRIVATE ${CMAKE_CURRENT_LIST_DIR})
# The tma variant's host-side decisions (transpose_tma.h: the strides TMA
# can map, the tile order, the sub-blocks' shared-memory places and their
# banks, the register transpose) run on the CPU: C, no GPU, no plugin.
kbench_test(test_transpose_tma SOURCES ${CMAKE_CURRENT_LIST_DIR}/tests/test_transpose_tma.c)
target_include_directories(test_transpose_tma PRIVATE ${CMAKE_CURRENT_LIST_DIR})
