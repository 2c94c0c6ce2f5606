// The layout of the block an attach writes into the target: what the load
// thread reads (the functions it calls, the agent's path) and writes (how the
// load went). Shared by load_thread.S and agent_injector.cc, so only #define.
// The block is the first page of the two the injector maps; the load
// thread's code is the second (read and execute only).
#ifndef MEMPROF_CLI_ATTACH_LOAD_BLOCK_H_
#define MEMPROF_CLI_ATTACH_LOAD_BLOCK_H_

// Addresses in the target of the functions the load thread calls.
#define MEMPROF_LB_PTHREAD_SELF 0x08
#define MEMPROF_LB_PTHREAD_DETACH 0x10
#define MEMPROF_LB_DLOPEN 0x18
#define MEMPROF_LB_DLSYM 0x20
#define MEMPROF_LB_DLERROR 0x28
#define MEMPROF_LB_STRNCPY 0x30
// Written by the load thread: the start function's return value, then the
// outcome (last), and the thread's id (first).
#define MEMPROF_LB_RESULT 0x40
#define MEMPROF_LB_STATE 0x44
#define MEMPROF_LB_TID 0x48
// Read by the load thread: two descriptors (int32) it closes before it
// ends, -1 for none: the memfds an attach through memfds made. Closed there,
// on a thread that shares the process's descriptor table, since the agent's
// own threads have tables of their own (agent/core/private_fd_table.h).
#define MEMPROF_LB_CLOSE_FDS 0x50
// NUL-terminated strings: the start function's name, the agent's path, and
// dlerror()'s text when the load failed, or the start function's reason
// when it did not start.
#define MEMPROF_LB_SYMBOL 0x80
#define MEMPROF_LB_SYMBOL_SIZE 0x80
#define MEMPROF_LB_PATH 0x100
#define MEMPROF_LB_PATH_SIZE 0x200
#define MEMPROF_LB_ERROR 0x300
#define MEMPROF_LB_ERROR_SIZE 0x100
// Where pthread_create stores the new thread's handle.
#define MEMPROF_LB_THREAD 0x400
// The start function's one argument, a NUL-terminated string: where the
// agent's server part is when the agent came through memfds ("" otherwise).
#define MEMPROF_LB_ARGUMENT 0x500
#define MEMPROF_LB_ARGUMENT_SIZE 0x100
// The names of the memfds an attach through memfds creates.
#define MEMPROF_LB_MEMFD_NAMES 0x600

// MEMPROF_LB_STATE values.
#define MEMPROF_LB_STATE_RUNNING 0
#define MEMPROF_LB_STATE_STARTED 1
#define MEMPROF_LB_STATE_LOAD_FAILED 2

#define MEMPROF_LB_PAGE_SIZE 0x1000
// In the code page, after the thread's code: the int3 that the injected
// pthread_create call returns to.
#define MEMPROF_LB_RETURN_TRAP 0xf00

#endif  // MEMPROF_CLI_ATTACH_LOAD_BLOCK_H_
