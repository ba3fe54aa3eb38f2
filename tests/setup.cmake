# tools/setup.sh's apt-get waits while another package manager holds the
# lock (tools/apt-get-wait, checked against a fake apt-get).
add_test(NAME setup_apt_wait
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/setup/check_apt_wait.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(setup_apt_wait PROPERTIES TIMEOUT 60)
