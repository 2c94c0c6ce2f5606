# CPack configuration for memprof's two Debian packages (packaging/README.md).
# Included from the top-level CMakeLists.txt after every install() rule
# (agent/, cli/, packaging/install.cmake):
#
#   cpack --config build/CPackConfig.cmake -B build/packages
#
#  - memprof: the install component "memprof", which is also the default
#    component (CMAKE_INSTALL_DEFAULT_COMPONENT_NAME in the top-level file):
#    memprofctl, libmemprof_agent.so.0 and its server module, docs and
#    everything else a user runs;
#  - libmemprof-agent-dev: the component "dev", what a program needs to link
#    the agent (header, .so link, pkg-config and CMake files).
#
# Runtime dependencies are computed from the binaries by dpkg-shlibdeps, so
# they follow how each is linked (memprofctl has gRPC, protobuf, abseil and
# OpenSSL built in: cmake/MemprofDeps.cmake). Listed by hand: what is loaded
# with dlopen (libmicrohttpd for the exporter, libxml2 for doctor on glibc
# targets) and what memprof works with rather than links (jemalloc, which
# `memprofctl run` preloads).
#
# Lintian rejects unstripped binaries, so the packages hold stripped ones and
# the debug information goes into memprof-dbgsym_<version>_<arch>.ddeb
# (/usr/lib/debug/.build-id/, where memprofctl's symbolizer and gdb look).

# cpack (and `make install`) pack what is built instead of first building
# every target, tests included (a fresh build's twenty minutes): build what
# the packages hold first, `bash dev.sh build` or the targets memprofctl,
# memprof_agent and memprof_agent_server; a target not built fails the install.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME memprof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "memprof maintainers")
set(CPACK_PACKAGE_CONTACT "${MEMPROF_DEB_MAINTAINER}")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
# Install with the prefix /usr into a staging DESTDIR, so that what is
# computed at install time (memprof-agent.pc) names /usr.
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_SET_DESTDIR ON)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL memprof dev)
set(CPACK_DEBIAN_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_PACKAGE_RELEASE ${MEMPROF_DEB_REVISION})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${MEMPROF_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # <package>_<version>-<revision>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)

# Every mode in the packages is set here or by the install rules, never taken
# from the tree they are built from: a release tarball (git archive) unpacked
# with umask 002 has files of mode 0664, and a build under that umask makes
# directories 0775. install(FILES) and install(TARGETS) give their files
# 0644 and 0755 themselves; these two give the rest Debian's modes (policy
# 10.9): the control files CPack copies (packaging/triggers, else lintian's
# control-file-has-bad-permissions) and the directories the install creates.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
  OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

# --- memprof --------------------------------------------------------------------
set(CPACK_DEBIAN_MEMPROF_PACKAGE_NAME memprof)
set(CPACK_DEBIAN_MEMPROF_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_MEMPROF_PACKAGE_DEPENDS
  "libjemalloc2, ${MEMPROF_MICROHTTPD_PACKAGE}, libxml2")
# jeprof (libjemalloc-dev) is only needed for the jeprof-based walkthroughs.
set(CPACK_DEBIAN_MEMPROF_PACKAGE_SUGGESTS "libjemalloc-dev")
set(CPACK_DEBIAN_MEMPROF_DESCRIPTION
  "heap inspector for running jemalloc-based processes
memprofctl finds memprof agents by process id, turns jemalloc heap profiling
on and off in a running process without restarting it, streams heap dumps and
allocator statistics over a local Unix socket, analyses the dumps (top lists,
diffs, flame graphs, pprof output) and serves a Prometheus exporter.

This package holds memprofctl, the in-process agent libmemprof_agent.so.0
(which `memprofctl run` preloads into a program) and the server module the
agent loads when a client first connects.")
# libmemprof_agent.so.0 is a public library: a shlibs file for the programs
# that link it, and libc's ldconfig trigger (packaging/triggers).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_MEMPROF_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/triggers)
set(CPACK_DEBIAN_MEMPROF_DEBUGINFO_PACKAGE ON)

# --- libmemprof-agent-dev -----------------------------------------------------
set(CPACK_DEBIAN_DEV_PACKAGE_NAME ${MEMPROF_DEV_PACKAGE})
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "memprof (= ${MEMPROF_DEB_VERSION})")
set(CPACK_DEBIAN_DEV_DESCRIPTION
  "memprof in-process agent - development files
Everything needed to link the memprof agent into a program and start it with
memprof_agent_start(): the header memprof/agent.h, the libmemprof_agent.so
link, a pkg-config file (memprof-agent) and a CMake package
(find_package(memprof) gives the imported target memprof::agent).")

include(CPack)
