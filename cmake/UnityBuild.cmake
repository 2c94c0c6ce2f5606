# memprof_unity_build(): the directory that calls it, and those below it,
# compile their targets' files in batches when MEMPROF_UNITY_BUILD is on
# (the top-level CMakeLists.txt says why). A macro: the variables must land
# in the caller's directory scope.
macro(memprof_unity_build)
  if(MEMPROF_UNITY_BUILD)
    set(CMAKE_UNITY_BUILD ON)
    set(CMAKE_UNITY_BUILD_BATCH_SIZE ${MEMPROF_UNITY_BATCH_SIZE})
  endif()
endmacro()
