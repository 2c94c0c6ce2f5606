#ifndef MEMPROF_TESTS_CLI_TESTING_UNIX_SOCKET_SERVER_H_
#define MEMPROF_TESTS_CLI_TESTING_UNIX_SOCKET_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace memprof::cli::testing {

// A real gRPC server for `service`, in this process (so SO_PEERCRED reports
// the test's own pid), listening on the Unix socket `path`; null if it could
// not start.
inline std::unique_ptr<grpc::Server> ServeOnUnixSocket(const std::string& path,
                                                       grpc::Service& service) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + path, grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  return builder.BuildAndStart();
}

}  // namespace memprof::cli::testing

#endif  // MEMPROF_TESTS_CLI_TESTING_UNIX_SOCKET_SERVER_H_
