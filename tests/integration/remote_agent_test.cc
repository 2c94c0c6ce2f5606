// The agent's remote listener (MEMPROF_LISTEN) end to end: a real jemalloc
// target with the agent preloaded listens in network namespace A
// (10.77.0.1), and a real gRPC client (tests/testprogs/remote_status_client)
// calls it from namespace B (10.77.0.2) over a veth pair, with certificates
// made in memory and written to files (TlsFixture). Only a client whose
// certificate chains to MEMPROF_TLS_CA is served; everything else is refused
// in the TLS handshake, and the target keeps serving. Fails when `ip` cannot
// run (naming the package); skipped where network namespaces cannot be made
// (not root, a container without CAP_NET_ADMIN).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/netns_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/integration/harness/tls_fixture.h"
#include "tests/support/debian_tools.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using Side = NetnsFixture::Side;
using std::chrono::seconds;

constexpr uint16_t kPort = 7070;

class RemoteAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(test_support::CanRun(test_support::Ip()));
    if (std::string why = NetnsFixture::Probe(); !why.empty()) {
      GTEST_SKIP() << "network namespaces unavailable: " << why;
    }
    auto netns = NetnsFixture::Create();
    ASSERT_TRUE(netns.has_value()) << netns.error().message;
    netns_ = std::move(*netns);
    auto tls = TlsFixture::Create(TlsFixtureOptions{netns_->address(Side::kA)});
    ASSERT_TRUE(tls.has_value()) << tls.error().message;
    tls_ = std::move(*tls);
    auto dir = TempDir::Create("memprof-it-remote");
    ASSERT_TRUE(dir.has_value()) << dir.error().message;
    socket_dir_.emplace(std::move(*dir));
  }

  std::string Listen() const { return netns_->address(Side::kA) + ":" + std::to_string(kPort); }

  // The environment of a target that listens on Listen() with the fixture's
  // server certificate and CA.
  std::map<std::string, std::string> RemoteEnv() const {
    auto env = tls_->AgentEnv();
    env["MEMPROF_LISTEN"] = Listen();
    return env;
  }

  // Starts `program` in namespace A with the agent (preloaded unless the
  // program links it) and `env`, and waits for its Unix socket. With
  // `expect_tcp`, also waits until it listens on kPort.
  TargetProcess* StartInA(std::map<std::string, std::string> env, bool expect_tcp,
                          const std::vector<std::string>& program = {kPlainTarget}) {
    if (program.front() == kPlainTarget) env["LD_PRELOAD"] = kAgentPreload;
    env["MALLOC_CONF"] = kProfilingReadyConf;
    env["MEMPROF_LOG_LEVEL"] = "info";
    TargetOptions options;
    options.argv = netns_->Command(Side::kA, program, env);
    options.socket_dir = socket_dir_->path();
    auto target = TargetProcess::Start(options);
    if (!target) {
      ADD_FAILURE() << target.error().message;
      return nullptr;
    }
    targets_.push_back(std::move(*target));
    TargetProcess* t = targets_.back().get();
    if (expect_tcp && !AwaitTcpListener(*t)) return nullptr;
    return t;
  }

  bool AwaitTcpListener(TargetProcess& target) {
    const bool up = WaitUntil(
        [&] { return target.process().HasExited() || ListensOnTcpPort(target.pid(), kPort); },
        seconds(30));
    if (up && !target.process().HasExited()) return true;
    ADD_FAILURE() << "the target does not listen on " << Listen() << "\n--- stderr ---\n"
                  << target.process().StderrText();
    return false;
  }

  // remote_status_client in namespace B against Listen(), with `args`.
  CommandResult ClientInB(std::vector<std::string> args) {
    args.insert(args.begin(), {kRemoteStatusClient, "--target", Listen(), "--timeout-ms", "10000"});
    return netns_->Run(Side::kB, args);
  }
  CommandResult GoodClientInB() {
    const TlsFiles& f = tls_->files();
    return ClientInB({"--ca", f.ca_cert, "--cert", f.client_cert, "--key", f.client_key});
  }

  // The call was refused before anything was served: the TLS handshake (or
  // the HTTP/2 preface of a plaintext client) failed, which gRPC reports as
  // UNAVAILABLE; no pid was revealed.
  static void ExpectRefused(const CommandResult& r) {
    EXPECT_EQ(r.exit_code, 1) << r;
    EXPECT_TRUE(r.out.starts_with("error UNAVAILABLE (14): ")) << r;
    EXPECT_EQ(r.out.find("pid "), std::string::npos) << r;
  }

  // Alive, and serving both ways: a good remote client gets its pid, and the
  // Unix socket accepts connections.
  void ExpectHealthy(TargetProcess& target) {
    EXPECT_FALSE(target.process().HasExited()) << target.process().StderrText();
    CommandResult r = GoodClientInB();
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(r.out, "pid " + std::to_string(target.pid()) + "\n") << r;
    EXPECT_TRUE(SocketAccepts(target.socket_path()));
  }

  // memprofctl in namespace B: ARGS, then the TLS flags (the fixture's good
  // client material, with `cert`/`key` in place of the client's if given).
  CommandResult MemprofctlInB(std::vector<std::string> args, const std::string& ca = "",
                              const std::string& cert = "", const std::string& key = "") {
    const TlsFiles& f = tls_->files();
    args.insert(args.begin(), kMemprofctl);
    args.insert(args.end(), {"--tls-ca", ca.empty() ? f.ca_cert : ca, "--tls-cert",
                             cert.empty() ? f.client_cert : cert, "--tls-key",
                             key.empty() ? f.client_key : key});
    return netns_->Run(Side::kB, args);
  }

  std::unique_ptr<NetnsFixture> netns_;
  std::unique_ptr<TlsFixture> tls_;
  std::optional<TempDir> socket_dir_;
  // Declared last, so destroyed (killed and reaped) first.
  std::vector<std::unique_ptr<TargetProcess>> targets_;
};

TEST_F(RemoteAgentTest, ClientWithACertificateFromTheCaGetsTheTargetsStatus) {
  TargetProcess* target = StartInA(RemoteEnv(), true);
  ASSERT_NE(target, nullptr);
  CommandResult r = GoodClientInB();
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "pid " + std::to_string(target->pid()) + "\n") << r;
  const std::string err = target->process().StderrText();
  EXPECT_NE(err.find("info: agent " + std::to_string(target->pid()) + " listening on " + Listen() +
                     " (mutual TLS)\n"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("info: serving remote client CN=memprof-client at ipv4:" +
                     netns_->address(Side::kB) + ":"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("warning"), std::string::npos) << err;
}

TEST_F(RemoteAgentTest, ClientCertificateFromAnotherCaIsRefused) {
  TargetProcess* target = StartInA(RemoteEnv(), true);
  ASSERT_NE(target, nullptr);
  const TlsFiles& f = tls_->files();
  ExpectRefused(
      ClientInB({"--ca", f.ca_cert, "--cert", f.wrong_client_cert, "--key", f.wrong_client_key}));
  ExpectHealthy(*target);
}

TEST_F(RemoteAgentTest, ClientWithoutACertificateIsRefused) {
  TargetProcess* target = StartInA(RemoteEnv(), true);
  ASSERT_NE(target, nullptr);
  ExpectRefused(ClientInB({"--ca", tls_->files().ca_cert}));
  ExpectHealthy(*target);
}

// The client checks the agent too: one that trusts another CA refuses the
// agent's certificate (and sends nothing).
TEST_F(RemoteAgentTest, ClientThatTrustsAnotherCaRefusesTheAgent) {
  TargetProcess* target = StartInA(RemoteEnv(), true);
  ASSERT_NE(target, nullptr);
  const TlsFiles& f = tls_->files();
  ExpectRefused(
      ClientInB({"--ca", f.wrong_ca_cert, "--cert", f.client_cert, "--key", f.client_key}));
  ExpectHealthy(*target);
}

TEST_F(RemoteAgentTest, PlaintextClientIsRefused) {
  TargetProcess* target = StartInA(RemoteEnv(), true);
  ASSERT_NE(target, nullptr);
  ExpectRefused(ClientInB({"--insecure"}));
  ExpectHealthy(*target);
}

// Without the TLS files there is no TCP listener at all (not even a
// plaintext one), one warning says what to set, and the Unix socket serves.
TEST_F(RemoteAgentTest, ListenWithoutTlsFilesServesTheUnixSocketOnly) {
  TargetProcess* target = StartInA({{"MEMPROF_LISTEN", Listen()}}, false);
  ASSERT_NE(target, nullptr);
  const std::string warning =
      "warning: not listening on TCP: MEMPROF_LISTEN=" + Listen() +
      " requires mutual TLS, but MEMPROF_TLS_CERT, MEMPROF_TLS_KEY and MEMPROF_TLS_CA are not "
      "set; set MEMPROF_TLS_CERT (the agent's certificate chain, PEM), MEMPROF_TLS_KEY (its "
      "private key, PEM) and MEMPROF_TLS_CA (the CA certificates that client certificates must "
      "chain to, PEM)\n";
  // The agent wrote it before its socket was up; the harness reads the
  // target's stderr on a thread of its own, so it may not have it yet.
  EXPECT_TRUE(test_support::WaitUntil(
      [&] { return target->process().StderrText().find(warning) != std::string::npos; },
      std::chrono::seconds(10)))
      << target->process().StderrText();
  EXPECT_FALSE(ListensOnTcpPort(target->pid(), kPort));
  CommandResult remote = ClientInB({"--insecure"});
  EXPECT_EQ(remote.exit_code, 1) << remote;
  // A real call over the Unix socket (as root, which the agent serves).
  CommandResult local = RunCommand(
      {kRemoteStatusClient, "--target", "unix:" + target->socket_path(), "--insecure"}, {});
  EXPECT_EQ(local.exit_code, 0) << local;
  EXPECT_EQ(local.out, "pid " + std::to_string(target->pid()) + "\n") << local;
  EXPECT_FALSE(target->process().HasExited());
}

// A mistake in the TLS files is named at start-up, not discovered as a
// handshake failure later.
TEST_F(RemoteAgentTest, KeyThatDoesNotMatchTheCertificateIsNamed) {
  auto env = RemoteEnv();
  env["MEMPROF_TLS_KEY"] = tls_->files().client_key;
  TargetProcess* target = StartInA(env, false);
  ASSERT_NE(target, nullptr);
  const std::string warning =
      "warning: not listening on TCP: the private key in MEMPROF_TLS_KEY '" +
      tls_->files().client_key + "' does not belong to the certificate in MEMPROF_TLS_CERT '" +
      tls_->files().server_cert + "'\n";
  EXPECT_TRUE(
      WaitUntil([&] { return target->process().StderrText().find(warning) != std::string::npos; },
                seconds(10)))
      << target->process().StderrText();
  EXPECT_FALSE(ListensOnTcpPort(target->pid(), kPort));
  EXPECT_TRUE(SocketAccepts(target->socket_path()));
}

// gRPC's default SO_REUSEPORT is off: a second agent cannot bind the same
// port and take a share of the first one's clients; it says why.
TEST_F(RemoteAgentTest, SecondAgentOnTheSamePortIsRefusedAndTheFirstKeepsItsClients) {
  TargetProcess* first = StartInA(RemoteEnv(), true);
  ASSERT_NE(first, nullptr);
  TargetProcess* second = StartInA(RemoteEnv(), false);
  ASSERT_NE(second, nullptr);
  const std::string warning = "warning: not listening on TCP: cannot listen on " + Listen() +
                              ": Address already in use (another socket already listens on "
                              "that port; choose another port in MEMPROF_LISTEN)\n";
  EXPECT_TRUE(
      WaitUntil([&] { return second->process().StderrText().find(warning) != std::string::npos; },
                seconds(10)))
      << second->process().StderrText();
  for (int i = 0; i < 5; ++i) {
    CommandResult r = GoodClientInB();
    EXPECT_EQ(r.out, "pid " + std::to_string(first->pid()) + "\n") << r;
  }
  EXPECT_TRUE(SocketAccepts(second->socket_path()));
}

// The port is released when the target exits (the library destructor stops
// the agent) and is never held by a forked child. The TCP server keeps gRPC
// running, so a worker that asks for an agent of its own is refused and told
// why.
// The parent's gRPC (its TCP listener included) is stopped before fork()
// and started again right after: the worker gets an agent of its own on its
// Unix socket only, and never holds the port.
TEST_F(RemoteAgentTest, ForkedWorkerGetsAUnixAgentButNotThePortAndExitReleasesIt) {
  TargetProcess* target = StartInA(RemoteEnv(), true, {kForkingTarget, "--worker-agent"});
  ASSERT_NE(target, nullptr);
  pid_t worker = 0;
  ASSERT_TRUE(WaitUntil(
      [&] {
        return std::sscanf(target->process().StdoutText().c_str(), "worker %d", &worker) == 1;
      },
      seconds(30)))
      << target->process().StdoutText();
  EXPECT_TRUE(HoldsTcpListener(target->pid(), kPort));
  EXPECT_FALSE(HoldsTcpListener(worker, kPort));
  EXPECT_NE(target->process().StdoutText().find("worker " + std::to_string(worker) + " agent 0"),
            std::string::npos)
      << target->process().StdoutText();
  const std::string worker_socket = socket_dir_->path() + "/" + std::to_string(worker) + ".sock";
  ASSERT_TRUE(WaitUntil([&] { return SocketAccepts(worker_socket); }, seconds(30)))
      << target->process().StderrText();
  EXPECT_FALSE(HoldsTcpListener(worker, kPort));
  ExpectHealthy(*target);  // the parent's listener is back
  if (HasFailure()) ADD_FAILURE() << "target stderr:\n" << target->process().StderrText();
  std::optional<ExitStatus> st = target->Terminate();
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->exit_code, 0) << target->process().StderrText();
  // The namespace outlives the target: nothing listens in it any more.
  CommandResult r = GoodClientInB();
  EXPECT_EQ(r.exit_code, 1) << r;
  EXPECT_NE(r.out.find("Connection refused"), std::string::npos) << r;
}

// ---- memprofctl against the remote listener --------------------------------

TEST_F(RemoteAgentTest, MemprofctlStatusActivateDumpAndStatsOverMutualTls) {
  TargetProcess* target = StartInA(RemoteEnv(), true);
  ASSERT_NE(target, nullptr);
  const std::string pid = std::to_string(target->pid());
  CommandResult status = MemprofctlInB({"status", "--target", Listen(), "--json"});
  ASSERT_EQ(status.exit_code, 0) << status;
  nlohmann::json parsed = ParseJsonOutput(status);
  EXPECT_EQ(parsed["pid"], target->pid());
  EXPECT_EQ(parsed["profiling_enabled"], true);

  CommandResult activate = MemprofctlInB({"activate", "--target", Listen()});
  ASSERT_EQ(activate.exit_code, 0) << activate;
  EXPECT_NE(activate.out.find("pid " + pid + ": profiling activated"), std::string::npos)
      << activate;

  auto out = TempDir::Create("memprof-it-remote-out");
  ASSERT_TRUE(out.has_value());
  CommandResult dump =
      MemprofctlInB({"dump", "--target", Listen(), "--out-dir", out->path(), "--json"});
  ASSERT_EQ(dump.exit_code, 0) << dump;
  const std::string path = ParseJsonOutput(dump).value("path", std::string());
  const std::string name = path.substr(path.rfind('/') + 1);
  EXPECT_TRUE(name.starts_with("10_77_0_1-" + pid + "-")) << name;
  EXPECT_TRUE(ReadFile(path).starts_with("heap_v2/")) << path;

  CommandResult stats = MemprofctlInB({"stats", "--target", Listen(), "--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats;
  EXPECT_GT(ParseJsonOutput(stats).value("allocated", 0), 0);

  CommandResult profile = MemprofctlInB(
      {"profile", "--target", Listen(), "--duration", "1s", "--out-dir", out->path(), "--json"});
  ASSERT_EQ(profile.exit_code, 0) << profile;
  EXPECT_TRUE(ReadFile(ParseJsonOutput(profile).value("path", std::string()))
                  .starts_with("heap_v2/"))
      << profile;
  ExpectHealthy(*target);
}

TEST_F(RemoteAgentTest, MemprofctlWithAClientCertificateFromAnotherCaIsExit4) {
  TargetProcess* target = StartInA(RemoteEnv(), true);
  ASSERT_NE(target, nullptr);
  const TlsFiles& f = tls_->files();
  ExpectCliError(MemprofctlInB({"status", "--target", Listen()}, f.ca_cert, f.wrong_client_cert,
                               f.wrong_client_key),
                 4,
                 "TLS handshake with " + Listen() +
                     " failed: the agent closed the connection, most likely because it does not "
                     "accept our client certificate");
  ExpectHealthy(*target);
}

TEST_F(RemoteAgentTest, MemprofctlTrustingAnotherCaIsExit4) {
  TargetProcess* target = StartInA(RemoteEnv(), true);
  ASSERT_NE(target, nullptr);
  ExpectCliError(MemprofctlInB({"activate", "--target", Listen()}, tls_->files().wrong_ca_cert), 4,
                 "TLS handshake with " + Listen() +
                     " failed: the agent's certificate is not signed by --tls-ca");
  EXPECT_FALSE(target->process().HasExited());
  ExpectHealthy(*target);
}

TEST_F(RemoteAgentTest, MemprofctlWithoutAClientCertificateIsAUsageError) {
  const TlsFiles& f = tls_->files();
  CommandResult r = netns_->Run(
      Side::kB, {kMemprofctl, "status", "--target", Listen(), "--tls-ca", f.ca_cert});
  ExpectCliError(r, 2, "remote targets need --tls-ca, --tls-cert and --tls-key");
}

// One round over a targets file: the remote agent, the same process through
// its Unix socket, and an address where nothing listens.
TEST_F(RemoteAgentTest, MemprofctlTargetsFileMixesRemoteAndLocalAndSurvivesADeadAddress) {
  TargetProcess* target = StartInA(RemoteEnv(), true);
  ASSERT_NE(target, nullptr);
  const std::string nobody = netns_->address(Side::kA) + ":" + std::to_string(kPort + 1);
  const std::string file = socket_dir_->File("fleet.txt");
  ASSERT_TRUE(WriteFile(file, "# fleet\n" + Listen() + "\n" + nobody + "\nunix:" +
                                  target->socket_path() + "\n"));
  CommandResult r = MemprofctlInB({"status", "--targets", file, "--json"});
  EXPECT_EQ(r.exit_code, 6) << r;
  std::map<std::string, nlohmann::json> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    lines[j.value("target", std::string())] = j;
  }
  ASSERT_EQ(lines.size(), 3u) << r;
  EXPECT_EQ(lines[Listen()]["ok"], true) << lines[Listen()];
  EXPECT_EQ(lines[Listen()]["pid"], target->pid());
  EXPECT_EQ(lines[Listen()]["address"], Listen());
  EXPECT_EQ(lines["unix:" + target->socket_path()]["pid"], target->pid());
  EXPECT_EQ(lines[nobody]["exit_code"], 3) << lines[nobody];
  EXPECT_NE(lines[nobody]["error"].get<std::string>().find("cannot reach a memprof agent at " +
                                                           nobody),
            std::string::npos)
      << lines[nobody];
  EXPECT_NE(r.err.find("1 of 3 targets failed: " + nobody + " (unavailable)"), std::string::npos)
      << r;
}

// The TLS files may come from $MEMPROFCTL_TLS_* instead of the flags: the
// good client material is served, the other CA's client is refused (so the
// variables are what the handshake used), and the agent's own MEMPROF_TLS_*
// are not taken for ours.
TEST_F(RemoteAgentTest, MemprofctlTakesItsTlsFilesFromTheEnvironment) {
  TargetProcess* target = StartInA(RemoteEnv(), true);
  ASSERT_NE(target, nullptr);
  const TlsFiles& f = tls_->files();
  const std::vector<std::string> status = {kMemprofctl, "status", "--target", Listen(), "--json"};
  CommandResult r = netns_->Run(Side::kB, status,
                                {{"MEMPROFCTL_TLS_CA", f.ca_cert},
                                 {"MEMPROFCTL_TLS_CERT", f.client_cert},
                                 {"MEMPROFCTL_TLS_KEY", f.client_key}});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(ParseJsonOutput(r)["pid"], target->pid());
  ExpectCliError(netns_->Run(Side::kB, status,
                             {{"MEMPROFCTL_TLS_CA", f.ca_cert},
                              {"MEMPROFCTL_TLS_CERT", f.wrong_client_cert},
                              {"MEMPROFCTL_TLS_KEY", f.wrong_client_key}}),
                 4, "does not accept our client certificate");
  ExpectCliError(netns_->Run(Side::kB, status, tls_->AgentEnv()), 2,
                 "remote targets need --tls-ca, --tls-cert and --tls-key");
  ExpectHealthy(*target);
}

// ... and from the config file (--config or $MEMPROFCTL_CONFIG), whose
// relative paths are relative to the file; a flag still wins over it.
TEST_F(RemoteAgentTest, MemprofctlTakesItsTlsFilesFromTheConfigFile) {
  TargetProcess* target = StartInA(RemoteEnv(), true);
  ASSERT_NE(target, nullptr);
  const TlsFiles& f = tls_->files();
  const std::string config = socket_dir_->File("memprofctl.toml");
  ASSERT_TRUE(WriteFile(config, "# remote agents\ntls-ca = \"" + f.ca_cert + "\"\ntls-cert = \"" +
                                    f.client_cert + "\"\ntls-key = \"" + f.client_key + "\"\n"));
  CommandResult r = netns_->Run(
      Side::kB, {kMemprofctl, "--config", config, "status", "--target", Listen(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(ParseJsonOutput(r)["pid"], target->pid());
  const std::vector<std::string> activate = {kMemprofctl, "activate", "--target", Listen()};
  r = netns_->Run(Side::kB, activate, {{"MEMPROFCTL_CONFIG", config}});
  EXPECT_EQ(r.exit_code, 0) << r;
  std::vector<std::string> wrong_ca = activate;
  wrong_ca.insert(wrong_ca.end(), {"--tls-ca", f.wrong_ca_cert});
  ExpectCliError(netns_->Run(Side::kB, wrong_ca, {{"MEMPROFCTL_CONFIG", config}}), 4,
                 "the agent's certificate is not signed by --tls-ca");
  ExpectHealthy(*target);
}

}  // namespace
}  // namespace memprof::integration
