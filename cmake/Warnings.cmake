# Settings linked privately by all product and test code (never by third-party code).
add_library(memprof_warnings INTERFACE)
target_compile_options(memprof_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow
  -Wcast-align -Wunused -Wnull-dereference -Wformat=2
  $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>)
if(MEMPROF_WERROR)
  target_compile_options(memprof_warnings INTERFACE -Werror)
endif()
if(MEMPROF_SANITIZE)
  target_compile_options(memprof_warnings INTERFACE -fsanitize=${MEMPROF_SANITIZE} -fno-omit-frame-pointer)
  target_link_options(memprof_warnings INTERFACE -fsanitize=${MEMPROF_SANITIZE})
endif()
