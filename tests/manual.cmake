# The man page and the bash and zsh completions that the build makes from
# the option table (core/CMakeLists.txt, core/src/cli/gen_manual.c) hold
# every option and command, and the completions load.
add_test(NAME manual
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/manual/check_manual.sh $<TARGET_FILE:kbench>
          ${CMAKE_BINARY_DIR}/manual)

# cmake --install puts them, the docs, conf/ and the JSON Schema in place.
add_test(NAME install_files
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/manual/check_install.sh ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR})

# docs/cli.md (synopsis, command table, each option's commands, exit codes)
# and README.md's examples agree with the built kbench.
add_test(NAME cli_docs
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/manual/check_cli_docs.sh $<TARGET_FILE:kbench>
          ${PROJECT_SOURCE_DIR})

# Each command's help and the general help, against the table of commands
# they are printed from (core/src/cli/commands.c).
kbench_test(test_help SOURCES test_help.c)
add_dependencies(test_help kbench)

# The documents refer to each other's sections by name, never by number,
# and every such reference and in-page link leads to a heading there.
add_test(NAME doc_refs
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/manual/check_doc_refs.py ${PROJECT_SOURCE_DIR})
