/* The start routine of the thread an attach creates in the target
   (agent_injector.cc): void* load_thread(block*). It runs as an ordinary
   thread of the target, created by the target's own pthread_create, so it
   may take the allocator's and the loader's locks like any other thread;
   the thread the injector borrowed for a moment holds none of them by then.
   It detaches itself, dlopen()s the agent, calls its start function with
   the block's argument string and its error area (why it did not start), and
   writes the outcome into the block (load_block.h), the state last.
   Position independent: it is copied into the target and reaches
   everything through the block's address. */
#include "cli/attach/load_block.h"

    .section .rodata
    .globl memprof_load_thread_begin
    .globl memprof_load_thread_end
memprof_load_thread_begin:
    push %rbx                               /* the block, and 16-byte stack alignment */
    mov %rdi, %rbx
    mov $186, %eax                          /* SYS_gettid */
    syscall
    mov %eax, MEMPROF_LB_TID(%rbx)
    call *MEMPROF_LB_PTHREAD_SELF(%rbx)
    mov %rax, %rdi
    call *MEMPROF_LB_PTHREAD_DETACH(%rbx)
    lea MEMPROF_LB_PATH(%rbx), %rdi
    mov $2, %esi                            /* RTLD_NOW */
    call *MEMPROF_LB_DLOPEN(%rbx)
    test %rax, %rax
    jz 1f
    mov %rax, %rdi
    lea MEMPROF_LB_SYMBOL(%rbx), %rsi
    call *MEMPROF_LB_DLSYM(%rbx)
    test %rax, %rax
    jz 1f
    lea MEMPROF_LB_ARGUMENT(%rbx), %rdi
    lea MEMPROF_LB_ERROR(%rbx), %rsi
    mov $MEMPROF_LB_ERROR_SIZE, %edx
    call *%rax              /* int memprof_agent_attach(const char*, char* error, size_t) */
    mov %eax, MEMPROF_LB_RESULT(%rbx)
    movl $MEMPROF_LB_STATE_STARTED, MEMPROF_LB_STATE(%rbx)
    jmp 2f
1:  call *MEMPROF_LB_DLERROR(%rbx)
    test %rax, %rax
    jz 3f
    lea MEMPROF_LB_ERROR(%rbx), %rdi
    mov %rax, %rsi
    mov $(MEMPROF_LB_ERROR_SIZE - 1), %edx
    call *MEMPROF_LB_STRNCPY(%rbx)
3:  movl $MEMPROF_LB_STATE_LOAD_FAILED, MEMPROF_LB_STATE(%rbx)
2:  mov MEMPROF_LB_CLOSE_FDS(%rbx), %edi
    test %edi, %edi
    js 4f
    mov $3, %eax                            /* SYS_close */
    syscall
4:  mov (MEMPROF_LB_CLOSE_FDS + 4)(%rbx), %edi
    test %edi, %edi
    js 5f
    mov $3, %eax
    syscall
5:  xor %eax, %eax
    pop %rbx
    ret
memprof_load_thread_end:

    .section .note.GNU-stack,"",@progbits
