#ifndef MEMPROF_AGENT_SERVICE_REMOTE_SERVER_H_
#define MEMPROF_AGENT_SERVICE_REMOTE_SERVER_H_

#include <memory>
#include <optional>
#include <string>

#include "agent/service/memory_profile_service.h"
#include "agent/service/tls_material.h"
#include "agent/shared/tcp_address.h"
#include "common/result.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace memprof::agent {

// The remote listener (MEMPROF_LISTEN): a gRPC server on a TCP address that
// speaks only mutual TLS. A client must present a certificate that chains to
// MEMPROF_TLS_CA, or the TLS handshake fails before any call is read. Over
// TCP there is no SO_PEERCRED uid to check, so the certificate is the whole
// authorization, on loopback too; the service in front of it must also be
// given RemoteAuthorizer() so that a call reaches it only with a verified
// certificate.
//
// Unlike the on-demand Unix server it is up for as long as the agent runs
// (it owns a port that clients expect to answer), so gRPC's threads stay up
// with it. Requests, responses and memory are limited as on the Unix socket
// (ApplyServerLimits), with a memory quota of its own so that remote clients
// cannot starve local ones, and TLS handshakes must finish within 10 s.
class RemoteServer {
 public:
  // Binds `address` (port 0: any free port, for tests) and starts serving
  // `service`, which must outlive the server. On failure nothing listens and
  // the error says why (the port is taken, the address is not this host's).
  [[nodiscard]] static Result<std::unique_ptr<RemoteServer>> Start(const TcpAddress& address,
                                                                   const TlsMaterial& tls,
                                                                   grpc::Service& service);
  ~RemoteServer();
  RemoteServer(const RemoteServer&) = delete;
  RemoteServer& operator=(const RemoteServer&) = delete;

  // The address it listens on, with the port actually bound.
  const TcpAddress& address() const { return address_; }

  void Shutdown();

 private:
  RemoteServer(TcpAddress address, std::unique_ptr<grpc::Server> server);

  TcpAddress address_;
  std::unique_ptr<grpc::Server> server_;
};

// The remote listener's policy for one call: nullopt to serve it, a
// PERMISSION_DENIED message otherwise. Only a call over TLS whose client
// presented a verified certificate is served.
std::optional<std::string> RemoteRefusal(const CallPeer& peer);

// RemoteRefusal, plus an info line per served call naming the certificate's
// subject and the client's address: a record of who used the agent remotely.
MemoryProfileService::Authorizer RemoteAuthorizer();

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SERVICE_REMOTE_SERVER_H_
