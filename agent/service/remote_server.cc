#include "agent/service/remote_server.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/server_credentials.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/logging/agent_logger.h"
#include "agent/service/on_demand_server.h"
#include "common/fd.h"

namespace memprof::agent {
namespace {

constexpr auto kShutdownGrace = std::chrono::milliseconds(500);
// A client that opens a connection and never finishes the TLS handshake
// holds it this long (gRPC's default is 120 s).
constexpr int kHandshakeTimeoutMs = 10'000;
// Connections without calls are closed after this; clients reconnect.
constexpr int kMaxConnectionIdleMs = 5 * 60'000;

std::string BindHint(int err) {
  switch (err) {
    case EADDRINUSE:
      return " (another socket already listens on that port; choose another port in "
             "MEMPROF_LISTEN)";
    case EADDRNOTAVAIL:
      return " (no network interface of this host has that address; check MEMPROF_LISTEN)";
    case EACCES:
      return " (ports below 1024 need the CAP_NET_BIND_SERVICE capability; choose a port from "
             "1024 up in MEMPROF_LISTEN)";
    default:
      return "";
  }
}

// Binds a throwaway socket to `address` first, the way gRPC will: gRPC
// reports a failed bind only as "could not start", and on the host's
// stderr; this finds out why, in words, and keeps gRPC quiet.
Result<void> ProbeBind(const TcpAddress& address) {
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (address.ipv6) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(address.port);
    ::inet_pton(AF_INET6, address.host.c_str(), &v6->sin6_addr);
    length = sizeof(sockaddr_in6);
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(address.port);
    ::inet_pton(AF_INET, address.host.c_str(), &v4->sin_addr);
    length = sizeof(sockaddr_in);
  }
  Fd fd(::socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int one = 1;
  if (!fd || ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&storage), length) != 0) {
    const int err = errno;
    return Fail(ErrorCode::kUnavailable, "cannot listen on " + address.ToString() + ": " +
                                             std::strerror(err) + BindHint(err));
  }
  return {};
}

std::shared_ptr<grpc::ServerCredentials> MutualTlsCredentials(const TlsMaterial& tls) {
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls.client_ca_pem;
  options.pem_key_cert_pairs.push_back({tls.private_key_pem, tls.cert_chain_pem});
  auto credentials = grpc::SslServerCredentials(options);
  std::string& key = options.pem_key_cert_pairs.front().private_key;
  OPENSSL_cleanse(key.data(), key.size());
  return credentials;
}

}  // namespace

RemoteServer::RemoteServer(TcpAddress address, std::unique_ptr<grpc::Server> server)
    : address_(std::move(address)), server_(std::move(server)) {}

RemoteServer::~RemoteServer() { Shutdown(); }

Result<std::unique_ptr<RemoteServer>> RemoteServer::Start(const TcpAddress& address,
                                                          const TlsMaterial& tls,
                                                          grpc::Service& service) {
  if (auto probe = ProbeBind(address); !probe) return Fail(probe.error());
  if (auto r = PrepareGrpcStart(); !r) return Fail(r.error());
  GrpcReference held;
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  ApplyServerLimits(builder, "memprof-agent-remote");
  // gRPC sets SO_REUSEPORT by default: a second process of the same user
  // could then bind the same port and take a share of the connections.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, kHandshakeTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, kMaxConnectionIdleMs);
  int port = 0;
  builder.AddListeningPort(address.ToString(), MutualTlsCredentials(tls), &port);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    if (server) server->Shutdown();
    FinishGrpcShutdown();
    return Fail(ErrorCode::kUnavailable,
                "cannot listen on " + address.ToString() + ": gRPC could not start the server");
  }
  TcpAddress bound = address;
  bound.port = static_cast<uint16_t>(port);
  return std::unique_ptr<RemoteServer>(new RemoteServer(std::move(bound), std::move(server)));
}

void RemoteServer::Shutdown() {
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
  server_.reset();
  FinishGrpcShutdown();
  Logger().debug("stopped listening on {}", address_.ToString());
}

std::optional<std::string> RemoteRefusal(const CallPeer& peer) {
  if (peer.transport_security != GRPC_SSL_TRANSPORT_SECURITY_TYPE) {
    return "a call from " + peer.address +
           " did not arrive over TLS; the agent's TCP listener serves mutual TLS only";
  }
  if (!peer.client_certificate) {
    return "a call from " + peer.address +
           " came without a verified client certificate; the agent's TCP listener serves "
           "only clients whose certificate chains to MEMPROF_TLS_CA";
  }
  return std::nullopt;
}

MemoryProfileService::Authorizer RemoteAuthorizer() {
  return [](const CallPeer& peer) -> std::optional<std::string> {
    auto refusal = RemoteRefusal(peer);
    if (!refusal) {
      Logger().info("serving remote client {} at {}",
                    peer.certificate_subject.empty() ? "(no subject)" : peer.certificate_subject,
                    peer.address);
    }
    return refusal;
  };
}

}  // namespace memprof::agent
