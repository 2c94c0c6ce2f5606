# CPack configuration for the memprof Debian package. Included from the top-level
# CMakeLists.txt after every component has declared its install() rules
# (agent/: libmemprof_agent.so and memprof/agent.h, cli/: memprofctl).
#
#   cmake --build build && cpack --config build/CPackConfig.cmake -B build/packages
#
# Runtime dependencies are computed from the binaries by dpkg-shlibdeps, so
# they follow how each is linked (memprofctl has gRPC, protobuf, abseil and
# OpenSSL built in: cmake/MemprofDeps.cmake). Listed by hand: what is loaded
# with dlopen (libmicrohttpd for the exporter) and what memprof works with
# rather than links (jemalloc, which `memprofctl run` preloads).

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME memprof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "memprof maintainers")
set(CPACK_PACKAGE_CONTACT "memprof maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Inspect the heap of running jemalloc-based processes without restarting them")
set(CPACK_PACKAGE_DESCRIPTION
  "memprof activates jemalloc heap profiling in a running process, streams heap \
profiles and allocator statistics back over a local Unix socket, and analyses \
the dumps. It ships libmemprof_agent.so (preloadable or linked) and memprofctl.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES OFF)  # Keep symbols: we are a profiling tool.

set(CPACK_DEBIAN_PACKAGE_MAINTAINER "memprof maintainers")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # memprof_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libjemalloc2, ${MEMPROF_MICROHTTPD_PACKAGE}")
# jeprof (libjemalloc-dev) is only needed for the jeprof-based walkthroughs.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libjemalloc-dev")

include(CPack)
