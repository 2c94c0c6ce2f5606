/*
 * memprof agent: serves the memprof.v1.MemoryProfile gRPC service inside this
 * process on the Unix socket $MEMPROF_SOCKET_DIR/<pid>.sock (default
 * /tmp/memprof), so `memprofctl` can read allocator statistics and stream
 * heap profiles without restarting the process.
 *
 * With MEMPROF_LISTEN=host:port and the PEM files MEMPROF_TLS_CERT,
 * MEMPROF_TLS_KEY and MEMPROF_TLS_CA it also serves the service over TCP,
 * with mutual TLS only (docs/security.md).
 *
 * Preloading libmemprof_agent.so (LD_PRELOAD) starts the agent by itself.
 * A program that links the library calls memprof_agent_start() when it is
 * ready. Setting MEMPROF_AGENT=off disables the agent in both cases.
 *
 * Both functions are safe to call from C and C++, never throw, never abort
 * the process, and may be called more than once.
 */
#ifndef MEMPROF_AGENT_H_
#define MEMPROF_AGENT_H_

#define MEMPROF_AGENT_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#define MEMPROF_NOEXCEPT noexcept
#else
#define MEMPROF_NOEXCEPT
#endif

/*
 * Starts the agent. Returns 0 when the agent is running (including when it
 * already was) or is disabled by MEMPROF_AGENT=off; a negative value when it
 * could not start (the reason is logged to stderr by the "memprof" logger).
 */
MEMPROF_AGENT_EXPORT int memprof_agent_start(void) MEMPROF_NOEXCEPT;

/* Stops the agent and removes its socket. Does nothing if it is not running. */
MEMPROF_AGENT_EXPORT void memprof_agent_stop(void) MEMPROF_NOEXCEPT;

#undef MEMPROF_NOEXCEPT
#ifdef __cplusplus
}
#endif

#endif /* MEMPROF_AGENT_H_ */
