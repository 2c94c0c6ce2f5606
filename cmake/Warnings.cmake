# Settings linked privately by all product and test code (never by third-party code).
set(_memprof_warning_flags -Wall -Wextra -Wpedantic -Wshadow
  -Wcast-align -Wunused -Wnull-dereference -Wformat=2
  $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>)
if(MEMPROF_WERROR)
  list(APPEND _memprof_warning_flags -Werror)
endif()

# MEMPROF_SANITIZE (e.g. "address,undefined" or "thread") instruments
# everything that links memprof_warnings: the product and the tests.
# Recoverable checks (UBSan's) still report and go on; the sanitizer stages
# of `bash dev.sh test` stop a process at its first finding with
# halt_on_error=1 and fail the run on any report (docs/reliability.md).
add_library(memprof_sanitize INTERFACE)
if(MEMPROF_SANITIZE)
  target_compile_options(memprof_sanitize INTERFACE -fsanitize=${MEMPROF_SANITIZE} -fno-omit-frame-pointer
    # UBSan's vptr check names each polymorphic class's typeinfo; a target
    # that calls a class whose typeinfo lives in a library it must not link
    # sets MEMPROF_NO_VPTR_CHECK (the agent's allocators: tcmalloc's
    # MallocExtension, resolved at run time).
    $<$<BOOL:$<TARGET_PROPERTY:MEMPROF_NO_VPTR_CHECK>>:-fno-sanitize=vptr>)
  target_link_options(memprof_sanitize INTERFACE -fsanitize=${MEMPROF_SANITIZE})
  # The runtime that an uninstrumented program must load first (LD_PRELOAD)
  # before it loads an instrumented agent: ASan and TSan refuse to start
  # later in the process (UBSan alone has no such rule).
  if(MEMPROF_SANITIZE MATCHES "address")
    set(_memprof_sanitizer_runtime libasan.so)
  elseif(MEMPROF_SANITIZE MATCHES "thread")
    set(_memprof_sanitizer_runtime libtsan.so)
  endif()
  if(_memprof_sanitizer_runtime)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${_memprof_sanitizer_runtime}
      OUTPUT_VARIABLE MEMPROF_SANITIZER_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
    get_filename_component(MEMPROF_SANITIZER_RUNTIME "${MEMPROF_SANITIZER_RUNTIME}" REALPATH)
  endif()
endif()

add_library(memprof_warnings INTERFACE)
target_compile_options(memprof_warnings INTERFACE ${_memprof_warning_flags})
target_link_libraries(memprof_warnings INTERFACE memprof_sanitize)

# The same warnings without the sanitizer: for the programs the tests load the
# agent into (tests/testprogs), which stand for other people's services, built
# without any sanitizer.
add_library(memprof_host_warnings INTERFACE)
target_compile_options(memprof_host_warnings INTERFACE ${_memprof_warning_flags})
