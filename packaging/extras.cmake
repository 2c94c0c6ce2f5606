# What the runtime package (COMPONENT memprof) ships besides the binaries:
# man pages, bash and zsh completion, and the systemd examples. Included from
# the top-level CMakeLists.txt after cli/, whose memprofctl the man pages are
# made from.
#
#   share/man/man1/memprofctl.1.gz, memprofctl-COMMAND.1.gz  (help2man over the
#       CLI's own --help, plus docs/man/*.h2m: docs/man/make-man-page.sh)
#   share/man/man7/memprof-agent.7.gz                       (docs/man/memprof-agent.7)
#   share/bash-completion/completions/memprofctl            (packaging/completion/)
#   share/zsh/vendor-completions/_memprofctl
#   share/doc/memprof/examples/memprof-preload.conf,        (packaging/systemd/)
#       memprof-exporter.service
#
# tests/docs/ renders every page, drives both completions and verifies the
# unit.

option(MEMPROF_BUILD_MAN "Build the man pages (needs help2man and gzip)" ${MEMPROF_BUILD_CLI})

# Every memprofctl command has a page of its own, memprofctl-COMMAND(1), as
# git has: each command's options are a page long. tests/docs checks this list
# against `memprofctl --help`.
set(MEMPROF_MAN_COMMANDS
  list status activate deactivate dump profile stats doctor purge exporter report run attach)

set(_man_dir ${PROJECT_BINARY_DIR}/docs/man)

function(_memprof_add_command_page command)
  if(command STREQUAL "-")
    set(_page memprofctl)
  else()
    set(_page memprofctl-${command})
  endif()
  set(_out ${_man_dir}/man1/${_page}.1.gz)
  set(_include ${PROJECT_SOURCE_DIR}/docs/man/${_page}.h2m)
  set(_depends memprofctl ${PROJECT_SOURCE_DIR}/docs/man/make-man-page.sh)
  if(EXISTS ${_include})
    list(APPEND _depends ${_include})
  endif()
  add_custom_command(OUTPUT ${_out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_man_dir}/man1
    COMMAND ${CMAKE_COMMAND} -E env SOURCE_DATE_EPOCH=${_memprof_man_epoch}
            sh ${PROJECT_SOURCE_DIR}/docs/man/make-man-page.sh $<TARGET_FILE:memprofctl>
            ${command} ${PROJECT_SOURCE_DIR}/docs/man ${_out}
    DEPENDS ${_depends}
    COMMENT "Man page ${_page}(1)"
    VERBATIM)
  set_property(GLOBAL APPEND PROPERTY MEMPROF_MAN_PAGES ${_out})
endfunction()

if(MEMPROF_BUILD_CLI AND MEMPROF_BUILD_MAN)
  find_program(MEMPROF_HELP2MAN help2man)
  find_program(MEMPROF_GZIP gzip)
  if(NOT MEMPROF_HELP2MAN OR NOT MEMPROF_GZIP)
    message(FATAL_ERROR "The man pages need help2man and gzip (apt-get install help2man gzip), "
                        "or configure with -DMEMPROF_BUILD_MAN=OFF")
  endif()
  # The pages' date: the last commit's, so a rebuild makes the same bytes.
  execute_process(COMMAND git log -1 --format=%ct
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    OUTPUT_VARIABLE _memprof_man_epoch OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET RESULT_VARIABLE _git_rc)
  if(NOT _git_rc EQUAL 0 OR _memprof_man_epoch STREQUAL "")
    string(TIMESTAMP _memprof_man_epoch "%s")
  endif()

  # Not used but for CONFIGURE_DEPENDS: a new docs/man/*.h2m re-runs cmake,
  # so the page it belongs to picks it up.
  file(GLOB _memprof_h2m_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/*.h2m)
  _memprof_add_command_page(-)
  foreach(_command IN LISTS MEMPROF_MAN_COMMANDS)
    _memprof_add_command_page(${_command})
  endforeach()

  # memprof-agent(7) is written in roff; only the version is filled in.
  set(MEMPROF_VERSION ${PROJECT_VERSION})
  configure_file(${PROJECT_SOURCE_DIR}/docs/man/memprof-agent.7
                 ${_man_dir}/memprof-agent.7 @ONLY)
  set(_agent_page ${_man_dir}/man7/memprof-agent.7.gz)
  add_custom_command(OUTPUT ${_agent_page}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_man_dir}/man7
    COMMAND sh -c "gzip -9n -c \"$1\" > \"$2\"" sh ${_man_dir}/memprof-agent.7 ${_agent_page}
    DEPENDS ${_man_dir}/memprof-agent.7
    COMMENT "Man page memprof-agent(7)"
    VERBATIM)

  get_property(_pages GLOBAL PROPERTY MEMPROF_MAN_PAGES)
  add_custom_target(memprof_man ALL DEPENDS ${_pages} ${_agent_page})
  install(FILES ${_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT memprof)
  install(FILES ${_agent_page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man7 COMPONENT memprof)
endif()

install(FILES ${PROJECT_SOURCE_DIR}/packaging/completion/memprofctl.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
  RENAME memprofctl
  COMPONENT memprof)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/completion/_memprofctl
  DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions
  COMPONENT memprof)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/memprof-preload.conf
              ${PROJECT_SOURCE_DIR}/packaging/systemd/memprof-exporter.service
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
  COMPONENT memprof)
