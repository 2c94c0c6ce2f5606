// The remote listener over real TCP and TLS on loopback, with certificates
// made in memory (tests/support/pki.h).
#include "agent/service/remote_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/heap/heap_engine.h"
#include "agent/service/on_demand_server.h"
#include "agent/shared/tcp_port_sockets.h"
#include "common/fd.h"
#include "tests/support/pki.h"

namespace memprof::agent {
namespace {

using std::chrono::seconds;
using test_support::CertUse;
using test_support::MakeTestCa;
using test_support::MakeTestLeaf;
using test_support::PemPair;

TcpAddress Loopback(uint16_t port) { return TcpAddress{"127.0.0.1", false, port}; }

class RemoteServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = std::make_unique<HeapEngine>(
        HeapEngineOptions{.malloc_conf = "prof:true",
                          .started_by = "",
                          .dump_limits = {.max_active = 2}});
    service_ = std::make_unique<MemoryProfileService>(*engine_, RemoteAuthorizer());
    ca_ = MakeTestCa("test CA");
    PemPair server = MakeTestLeaf(ca_, "agent", CertUse::kServer, "IP:127.0.0.1");
    tls_.cert_chain_pem = server.cert;
    tls_.private_key_pem = server.key;
    tls_.client_ca_pem = ca_.cert;
    client_ = MakeTestLeaf(ca_, "ops", CertUse::kClient, "");
  }

  // gRPC tears a client channel down on its own threads after the channel
  // object is gone; a test process that exits meanwhile has LeakSanitizer
  // find the TLS session being freed (OpenSSL objects no pointer reaches
  // any more, 1 test in about 100 under ASan). Waiting for gRPC's global
  // state to go, as the agent does when its server stops, ends that first.
  void TearDown() override {
    server_.reset();
    FinishGrpcShutdown(seconds(10));
  }

  void StartServer(uint16_t port = 0) {
    auto server = RemoteServer::Start(Loopback(port), tls_, *service_);
    ASSERT_TRUE(server.has_value()) << server.error().message;
    server_ = std::move(*server);
  }

  grpc::Status StatusWith(const std::shared_ptr<grpc::ChannelCredentials>& credentials,
                          v1::StatusResponse* response = nullptr) {
    auto channel = grpc::CreateChannel(server_->address().ToString(), credentials);
    auto stub = v1::MemoryProfile::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(10));
    v1::StatusResponse ignored;
    return stub->Status(&context, {}, response != nullptr ? response : &ignored);
  }

  std::shared_ptr<grpc::ChannelCredentials> Tls(const std::string& trusted_ca,
                                                const PemPair* client) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = trusted_ca;
    if (client != nullptr) {
      options.pem_cert_chain = client->cert;
      options.pem_private_key = client->key;
    }
    return grpc::SslCredentials(options);
  }

  std::unique_ptr<HeapEngine> engine_;
  std::unique_ptr<MemoryProfileService> service_;
  PemPair ca_;
  PemPair client_;
  TlsMaterial tls_;
  std::unique_ptr<RemoteServer> server_;
};

TEST_F(RemoteServerTest, ServesAClientWithACertificateFromTheCa) {
  StartServer();
  v1::StatusResponse response;
  grpc::Status status = StatusWith(Tls(ca_.cert, &client_), &response);
  ASSERT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
  EXPECT_EQ(response.pid(), ::getpid());
}

TEST_F(RemoteServerTest, RefusesAClientWithoutCertificate) {
  StartServer();
  grpc::Status status = StatusWith(Tls(ca_.cert, nullptr));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(RemoteServerTest, RefusesAClientCertificateFromAnotherCa) {
  StartServer();
  PemPair other_ca = MakeTestCa("other CA");
  PemPair stranger = MakeTestLeaf(other_ca, "ops", CertUse::kClient, "");
  grpc::Status status = StatusWith(Tls(ca_.cert, &stranger));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(RemoteServerTest, ClientThatTrustsAnotherCaRefusesTheServer) {
  StartServer();
  grpc::Status status = StatusWith(Tls(MakeTestCa("other CA").cert, &client_));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(RemoteServerTest, RefusesAPlaintextClient) {
  StartServer();
  grpc::Status status = StatusWith(grpc::InsecureChannelCredentials());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_TRUE(StatusWith(Tls(ca_.cert, &client_)).ok()) << "and serves on";
}

TEST_F(RemoteServerTest, TakenPortIsReportedInWords) {
  StartServer();
  const uint16_t port = server_->address().port;
  auto second = RemoteServer::Start(Loopback(port), tls_, *service_);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().message,
            "cannot listen on 127.0.0.1:" + std::to_string(port) +
                ": Address already in use (another socket already listens on that port; choose "
                "another port in MEMPROF_LISTEN)");
  EXPECT_TRUE(StatusWith(Tls(ca_.cert, &client_)).ok()) << "the first one still serves";
}

TEST_F(RemoteServerTest, AddressOfAnotherHostIsReportedInWords) {
  // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): no interface has it.
  auto server = RemoteServer::Start(TcpAddress{"192.0.2.1", false, 7070}, tls_, *service_);
  ASSERT_FALSE(server.has_value());
  EXPECT_EQ(server.error().message,
            "cannot listen on 192.0.2.1:7070: Cannot assign requested address (no network "
            "interface of this host has that address; check MEMPROF_LISTEN)");
}

TEST_F(RemoteServerTest, ShutdownFreesThePort) {
  StartServer();
  const uint16_t port = server_->address().port;
  server_.reset();
  StartServer(port);
  EXPECT_TRUE(StatusWith(Tls(ca_.cert, &client_)).ok());
}

TEST(RemoteRefusalTest, ServesOnlyTlsCallsWithAVerifiedCertificate) {
  EXPECT_EQ(RemoteRefusal(CallPeer{"ipv4:10.0.0.2:5000", "ssl", true, "CN=ops"}), std::nullopt);
  EXPECT_EQ(RemoteRefusal(CallPeer{"ipv4:10.0.0.2:5000", "ssl", false, ""}),
            "a call from ipv4:10.0.0.2:5000 came without a verified client certificate; the "
            "agent's TCP listener serves only clients whose certificate chains to "
            "MEMPROF_TLS_CA");
  EXPECT_EQ(RemoteRefusal(CallPeer{"fd:7", "insecure", false, ""}),
            "a call from fd:7 did not arrive over TLS; the agent's TCP listener serves mutual "
            "TLS only");
  EXPECT_NE(RemoteRefusal(CallPeer{"ipv4:10.0.0.2:5000", "", true, "CN=ops"}), std::nullopt);
}

// A listening TCP socket on 127.0.0.1 with a kernel-chosen port.
Fd ListenOnLoopback(uint16_t& port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::listen(fd.get(), 4) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return Fd();
  }
  port = ntohs(address.sin_port);
  return fd;
}

Fd ConnectTo(uint16_t port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    return Fd();
  }
  return fd;
}

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

// What a forked child does with the remote listener's inherited sockets: the
// listening socket and the accepted connections on its port are closed;
// everything else (another listener, the client end) stays.
TEST(CloseTcpSocketsOnPortTest, ClosesTheListenerAndItsConnectionsOnly) {
  uint16_t port = 0;
  uint16_t other_port = 0;
  Fd listener = ListenOnLoopback(port);
  Fd other = ListenOnLoopback(other_port);
  ASSERT_TRUE(listener && other);
  Fd client = ConnectTo(port);
  ASSERT_TRUE(client);
  Fd accepted(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  ASSERT_TRUE(accepted);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The client's local port is ephemeral, not `port`: it must stay.
    const int closed = CloseTcpSocketsOnPort(port);
    const bool ok = closed == 2 && !IsOpen(listener.get()) && !IsOpen(accepted.get()) &&
                    IsOpen(other.get()) && IsOpen(client.get());
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_TRUE(IsOpen(listener.get())) << "the parent keeps its sockets";
}

}  // namespace
}  // namespace memprof::agent
