// remote_status_client: one Status call to a memprof agent's TCP listener,
// for the remote-access integration tests (run inside a network namespace
// with `ip netns exec`, where the test process itself cannot connect).
//
//   remote_status_client --target HOST:PORT [--ca FILE] [--cert FILE --key FILE]
//                        [--server-name NAME] [--insecure] [--timeout-ms N]
//
// Prints "pid <N>" and exits 0 when the call succeeds; prints
// "error <CODE> (<number>): <message>" and exits 1 when it fails; exits 2 on
// a usage error. --insecure connects without TLS (which the agent must refuse).
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "memprof/v1/memory_profile.grpc.pb.h"
#include "tests/support/wait_until.h"

namespace {

// gRPC shuts itself down when its last user goes, on a detached thread of
// its own if that user went on a gRPC thread (the channel's last parts often
// do); a process that returns from main meanwhile exits with gRPC's timer
// and executor threads finished but not joined, which ThreadSanitizer
// reports as leaked (about 1 run in 20 of a refused call). Holding a
// reference of our own and giving it back last, then waiting until gRPC is
// down, ends gRPC before main returns.
class GrpcRunsUntilMainEnds {
 public:
  GrpcRunsUntilMainEnds() { grpc_init(); }
  ~GrpcRunsUntilMainEnds() {
    grpc_shutdown_blocking();
    memprof::test_support::WaitUntil([] { return grpc_is_initialized() == 0; },
                                     std::chrono::seconds(10));
  }
  GrpcRunsUntilMainEnds(const GrpcRunsUntilMainEnds&) = delete;
  GrpcRunsUntilMainEnds& operator=(const GrpcRunsUntilMainEnds&) = delete;
};

struct Options {
  std::map<std::string, std::string> values;  // --name -> value
  bool insecure = false;

  std::string Get(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? std::string() : it->second;
  }
};

bool ParseOptions(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--insecure") {
      options.insecure = true;
    } else if ((arg == "--target" || arg == "--ca" || arg == "--cert" || arg == "--key" ||
                arg == "--server-name" || arg == "--timeout-ms") &&
               i + 1 < argc) {
      options.values[arg] = argv[++i];
    } else {
      std::fprintf(stderr, "remote_status_client: unexpected argument '%s'\n", arg.c_str());
      return false;
    }
  }
  return !options.Get("--target").empty();
}

// The file's contents; "" when the path is empty. Exits 2 if it cannot be read.
std::string ReadOrEmpty(const std::string& path) {
  if (path.empty()) return "";
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "remote_status_client: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::shared_ptr<grpc::Channel> MakeChannel(const Options& options) {
  grpc::ChannelArguments args;
  if (!options.Get("--server-name").empty()) {
    args.SetSslTargetNameOverride(options.Get("--server-name"));
  }
  if (options.insecure) {
    return grpc::CreateCustomChannel(options.Get("--target"), grpc::InsecureChannelCredentials(),
                                     args);
  }
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = ReadOrEmpty(options.Get("--ca"));
  tls.pem_cert_chain = ReadOrEmpty(options.Get("--cert"));
  tls.pem_private_key = ReadOrEmpty(options.Get("--key"));
  return grpc::CreateCustomChannel(options.Get("--target"), grpc::SslCredentials(tls), args);
}

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    default:
      return "OTHER";
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: remote_status_client --target HOST:PORT [--ca FILE] [--cert FILE "
                 "--key FILE] [--server-name NAME] [--insecure] [--timeout-ms N]\n");
    return 2;
  }
  const GrpcRunsUntilMainEnds grpc;  // first: it outlives the channel
  const std::string timeout = options.Get("--timeout-ms");
  const long timeout_ms = timeout.empty() ? 10000 : std::strtol(timeout.c_str(), nullptr, 10);
  auto stub = memprof::v1::MemoryProfile::NewStub(MakeChannel(options));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  memprof::v1::StatusResponse response;
  grpc::Status status = stub->Status(&context, {}, &response);
  if (!status.ok()) {
    std::printf("error %s (%d): %s\n", CodeName(status.error_code()),
                static_cast<int>(status.error_code()), status.error_message().c_str());
    return 1;
  }
  std::printf("pid %d\n", static_cast<int>(response.pid()));
  return 0;
}
