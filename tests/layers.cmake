# The layers of core/src (core/CMakeLists.txt): no include runs upward.
add_test(NAME layers
  COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR}/core/src
          -P ${CMAKE_CURRENT_SOURCE_DIR}/layers/check_layers.cmake)
