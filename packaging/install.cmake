# What the packages hold besides the binaries (packaging/README.md). Included
# from the top-level CMakeLists.txt after agent/ and cli/, before cpack.cmake.
#
#  - component dev: the pkg-config file memprof-agent.pc and the CMake package
#    (find_package(memprof) -> memprof::agent), both in <libdir>;
#  - both components: /usr/share/doc/<package>/copyright (DEP-5) and
#    changelog.Debian.gz, as Debian policy wants of every binary package.

set(MEMPROF_DEB_REVISION 1)
set(MEMPROF_DEB_VERSION "${PROJECT_VERSION}-${MEMPROF_DEB_REVISION}")
set(MEMPROF_DEB_MAINTAINER
  "memprof maintainers <maintainers@users.noreply.a-seed-b2314330.example>")
set(MEMPROF_DEV_PACKAGE libmemprof-agent-dev)

if(TARGET memprof_agent)
  # The .pc names the prefix it is installed under, which is known only when
  # installing (cpack installs with the prefix /usr, see CPACK_SET_DESTDIR).
  set(_pc "${PROJECT_BINARY_DIR}/packaging/memprof-agent.pc")
  install(CODE "
    set(MEMPROF_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    set(CMAKE_INSTALL_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
    set(CMAKE_INSTALL_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
    set(PROJECT_VERSION \"${PROJECT_VERSION}\")
    configure_file(\"${CMAKE_CURRENT_LIST_DIR}/memprof-agent.pc.in\" \"${_pc}\" @ONLY)
    " COMPONENT dev)
  install(FILES "${_pc}" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig" COMPONENT dev)

  include(CMakePackageConfigHelpers)
  set(_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/memprof")
  write_basic_package_version_file("${PROJECT_BINARY_DIR}/packaging/memprofConfigVersion.cmake"
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
  install(FILES "${CMAKE_CURRENT_LIST_DIR}/memprofConfig.cmake"
    DESTINATION "${_cmake_dir}" COMPONENT dev)
  install(FILES "${PROJECT_BINARY_DIR}/packaging/memprofConfigVersion.cmake"
    DESTINATION "${_cmake_dir}" COMPONENT dev)
  install(EXPORT memprof-targets NAMESPACE memprof:: FILE memprof-targets.cmake
    DESTINATION "${_cmake_dir}" COMPONENT dev)
endif()

# changelog.Debian.gz: compressed the way dh_compress does (-9, no name or
# time stamp in the header), so that it is the same on every build.
configure_file("${CMAKE_CURRENT_LIST_DIR}/changelog.Debian.in"
  "${PROJECT_BINARY_DIR}/packaging/changelog.Debian" @ONLY)
execute_process(
  COMMAND gzip -9n -c "${PROJECT_BINARY_DIR}/packaging/changelog.Debian"
  OUTPUT_FILE "${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz"
  COMMAND_ERROR_IS_FATAL ANY)
foreach(_pair IN ITEMS "memprof:memprof" "${MEMPROF_DEV_PACKAGE}:dev")
  string(REPLACE ":" ";" _pair "${_pair}")
  list(GET _pair 0 _package)
  list(GET _pair 1 _component)
  install(FILES "${CMAKE_CURRENT_LIST_DIR}/copyright"
                "${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz"
    DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/${_package}" COMPONENT ${_component})
endforeach()
