# find_package(memprof): the imported target memprof::agent, the in-process
# agent (libmemprof_agent.so) with its header memprof/agent.h.
#
#   find_package(memprof REQUIRED)
#   target_link_libraries(app PRIVATE memprof::agent)
include("${CMAKE_CURRENT_LIST_DIR}/memprof-targets.cmake")
set(memprof_FOUND TRUE)
