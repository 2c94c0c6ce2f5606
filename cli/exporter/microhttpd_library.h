#ifndef MEMPROF_CLI_EXPORTER_MICROHTTPD_LIBRARY_H_
#define MEMPROF_CLI_EXPORTER_MICROHTTPD_LIBRARY_H_

#include <microhttpd.h>

#include "common/result.h"

namespace memprof::cli {

// The libmicrohttpd functions the exporter calls, resolved from the shared
// library when the exporter starts instead of when memprofctl does.
//
// Why: libmicrohttpd brings GnuTLS and eight more libraries with it, and
// every memprofctl command would pay the dynamic loader for them while only
// `exporter` uses them (docs/performance.md, start-up). Debian ships no
// static GnuTLS stack to link instead.
struct MicrohttpdApi {
  decltype(&MHD_start_daemon) start_daemon;
  decltype(&MHD_stop_daemon) stop_daemon;
  decltype(&MHD_create_response_from_buffer) create_response_from_buffer;
  decltype(&MHD_add_response_header) add_response_header;
  decltype(&MHD_queue_response) queue_response;
  decltype(&MHD_destroy_response) destroy_response;
  decltype(&MHD_get_connection_values) get_connection_values;
  decltype(&MHD_lookup_connection_value) lookup_connection_value;
};

// Loads the library on the first call (thread-safe) and keeps it loaded.
// The error names the library and the Debian package that provides it.
[[nodiscard]] Result<const MicrohttpdApi*> Microhttpd();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_MICROHTTPD_LIBRARY_H_
