# How memprof's binaries link their heavy dependencies.
#
# memprofctl is a command an operator types, so it has to start as fast as
# redis-cli does (docs/performance.md). Linked against Debian's shared gRPC,
# protobuf, abseil and OpenSSL it loads about 70 libraries, and the dynamic
# loader's binding of them was half of `memprofctl --version`. So the targets
# that set the property MEMPROF_STATIC_DEPS (memprofctl) link Debian's own
# static archives of those libraries instead, and the linker keeps only the
# sections they reach. Everything else (the agent's server, which is loaded
# into other people's processes next to their copies of the same libraries,
# and the test programs) links the shared ones.
#
# The switch is a property of the executable, not of the libraries: the
# interface targets below pick the archives or the shared libraries according
# to the target being linked ($<TARGET_PROPERTY:...> in a link interface is
# evaluated on the consumer), so one build of the CLI's libraries serves both.
option(MEMPROF_STATIC_DEPS
  "Link memprofctl with the static archives of gRPC, protobuf, abseil and OpenSSL" ON)

find_package(PkgConfig REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
pkg_check_modules(MEMPROF_RPC_PC REQUIRED IMPORTED_TARGET grpc++ protobuf)

# Libraries that stay shared in every case: the C library's parts, and the
# two that Debian wants in one copy, zlib's libz.so.1 and bzip2's
# libbz2.so.1.0 (lintian: embedded-library).
set(_memprof_system_libs dl pthread m rt atomic c z bz2)
find_package(ZLIB REQUIRED)

function(_memprof_static_archives out)
  set(archives)
  foreach(name IN LISTS ARGN)
    if(name IN_LIST _memprof_system_libs)
      continue()
    endif()
    find_library(_memprof_archive_${name} NAMES lib${name}.a
      HINTS ${MEMPROF_RPC_PC_STATIC_LIBRARY_DIRS} NO_CACHE)
    if(NOT _memprof_archive_${name})
      message(FATAL_ERROR "MEMPROF_STATIC_DEPS: lib${name}.a not found; install its -dev "
                          "package or configure with -DMEMPROF_STATIC_DEPS=OFF")
    endif()
    list(APPEND archives ${_memprof_archive_${name}})
  endforeach()
  list(REMOVE_DUPLICATES archives)
  set(${out} ${archives} PARENT_SCOPE)
endfunction()

set(_static "$<BOOL:$<TARGET_PROPERTY:MEMPROF_STATIC_DEPS>>")
set(_shared "$<NOT:${_static}>")

# memprof_deps(NAME SHARED <imported targets>... ARCHIVES <library names>...)
# An interface target that links the static archives of ARCHIVES into the
# targets with MEMPROF_STATIC_DEPS set and the SHARED targets into the others.
function(memprof_deps name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SHARED;ARCHIVES")
  add_library(${name} INTERFACE)
  if(NOT MEMPROF_STATIC_DEPS)
    target_link_libraries(${name} INTERFACE ${ARG_SHARED})
    return()
  endif()
  _memprof_static_archives(archives ${ARG_ARCHIVES})
  list(LENGTH archives count)
  if(count GREATER 1)
    # abseil's archives refer to each other in circles: the group is rescanned.
    list(JOIN archives "," group)
    set(archives "$<LINK_GROUP:RESCAN,${group}>")
  endif()
  set(links "$<${_static}:${archives}>" "$<${_static}:${CMAKE_DL_LIBS}>"
            "$<${_static}:Threads::Threads>")
  if("z" IN_LIST ARG_ARCHIVES)
    list(APPEND links "$<${_static}:ZLIB::ZLIB>")
  endif()
  if("bz2" IN_LIST ARG_ARCHIVES)
    list(APPEND links "$<${_static}:bz2>")
  endif()
  foreach(target IN LISTS ARG_SHARED)
    list(APPEND links "$<${_shared}:${target}>")
  endforeach()
  target_link_libraries(${name} INTERFACE ${links})
endfunction()

# gRPC and protobuf (with abseil, upb, re2, c-ares, OpenSSL and zlib below them).
memprof_deps(memprof_rpc_deps SHARED gRPC::grpc++ protobuf::libprotobuf
             ARCHIVES ${MEMPROF_RPC_PC_STATIC_LIBRARIES})
# protobuf alone (the pprof writer's generated code).
memprof_deps(memprof_protobuf_deps SHARED protobuf::libprotobuf ARCHIVES protobuf)
# abseil's flat_hash_map/flat_hash_set (the report engine's per-frame lookups,
# a million per big dump: open addressing, no node per entry).
pkg_check_modules(MEMPROF_ABSL_HASH_PC REQUIRED absl_flat_hash_map absl_flat_hash_set)
memprof_deps(memprof_hash_deps SHARED absl::flat_hash_map absl::flat_hash_set
             ARCHIVES ${MEMPROF_ABSL_HASH_PC_STATIC_LIBRARIES})
# nghttp2 (libnghttp2-dev): the CLI's one-shot unary calls to a local agent
# (cli/client/http2_unary_call.h), on the calling thread.
pkg_check_modules(MEMPROF_NGHTTP2_PC REQUIRED IMPORTED_TARGET libnghttp2)
memprof_deps(memprof_http2_deps SHARED PkgConfig::MEMPROF_NGHTTP2_PC ARCHIVES nghttp2)
# elfutils (libdw, libelf; symbolization and `attach`). Loading libdw.so
# brought libelf, liblzma, libbz2 and libz behind it: 0.8 ms of every
# command's start-up on the benchmark machine, for a library only `report`,
# `attach` and the exporter's profiles use. Its archives are linked in
# instead; libdw's own dlopen of libdebuginfod then binds to memprofctl's
# (cli/debuginfod_gate.cc) at link time.
pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw)
pkg_check_modules(LIBELF REQUIRED IMPORTED_TARGET libelf)
memprof_deps(memprof_elfutils_deps SHARED PkgConfig::LIBDW PkgConfig::LIBELF
             ARCHIVES dw elf lzma bz2 z)
# OpenSSL's libcrypto (common/'s SHA-256): the archive when the RPC stack is
# static too, so that one process never holds two copies.
memprof_deps(memprof_crypto_deps SHARED OpenSSL::Crypto ARCHIVES crypto)
target_include_directories(memprof_crypto_deps SYSTEM INTERFACE ${OPENSSL_INCLUDE_DIR})

# The soname of lib<name>, a library memprofctl loads with dlopen (so that
# only its headers are used at build time), as the build host has it:
# <out_var> is "lib<name>.so.N" and <out_var>_MAJOR is N. <library_var> caches
# where the library was found.
function(memprof_dlopened_soname out_var library_var name)
  find_library(${library_var} ${name} REQUIRED)
  file(REAL_PATH ${${library_var}} _real)
  get_filename_component(_file ${_real} NAME)
  if(NOT _file MATCHES "^(lib${name}\\.so\\.([0-9]+))")
    message(FATAL_ERROR "cannot tell lib${name}'s soname from ${_real}")
  endif()
  set(${out_var} ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${out_var}_MAJOR ${CMAKE_MATCH_2} PARENT_SCOPE)
endfunction()
