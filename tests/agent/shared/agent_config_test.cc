#include "agent/shared/agent_config.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace memprof::agent {
namespace {

AgentConfig FromMap(const std::map<std::string, std::string>& env) {
  return ConfigFromEnvironment([&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(AgentConfigTest, Defaults) {
  AgentConfig c = FromMap({});
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.socket_dir, "/tmp/memprof");
  EXPECT_EQ(c.idle_timeout, std::chrono::seconds(30));
  EXPECT_TRUE(c.warnings.empty());
}

TEST(AgentConfigTest, OffSwitchAcceptsCommonSpellings) {
  for (const char* off : {"off", "OFF", "0", "false", "no"}) {
    EXPECT_FALSE(FromMap({{"MEMPROF_AGENT", off}}).enabled) << off;
  }
  for (const char* on : {"on", "1", "", "yes"}) {
    EXPECT_TRUE(FromMap({{"MEMPROF_AGENT", on}}).enabled) << on;
  }
}

TEST(AgentConfigTest, ReadsDirectoryLogLevelAndMallocConf) {
  AgentConfig c = FromMap({{"MEMPROF_SOCKET_DIR", "/run/mp/"},
                           {"MEMPROF_LOG_LEVEL", "debug"},
                           {"MALLOC_CONF", "prof:true"}});
  EXPECT_EQ(c.socket_dir, "/run/mp");
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.malloc_conf, "prof:true");
}

TEST(AgentConfigTest, IdleTimeoutNeedsAUnitAndBounds) {
  EXPECT_EQ(FromMap({{"MEMPROF_IDLE_TIMEOUT", "2s"}}).idle_timeout, std::chrono::seconds(2));
  for (const char* bad : {"2", "10ms", "48h", "soon"}) {
    AgentConfig c = FromMap({{"MEMPROF_IDLE_TIMEOUT", bad}});
    EXPECT_EQ(c.idle_timeout, std::chrono::seconds(30)) << bad;
    ASSERT_EQ(c.warnings.size(), 1u) << bad;
    EXPECT_NE(c.warnings[0].find("MEMPROF_IDLE_TIMEOUT"), std::string::npos);
  }
}

TEST(AgentConfigTest, DumpStallTimeoutDefaultsTo30sAndNeedsAUnitAndBounds) {
  EXPECT_EQ(FromMap({}).dump_stall_timeout, std::chrono::seconds(30));
  EXPECT_EQ(FromMap({{"MEMPROF_DUMP_STALL_TIMEOUT", "2s"}}).dump_stall_timeout,
            std::chrono::seconds(2));
  EXPECT_EQ(FromMap({{"MEMPROF_DUMP_STALL_TIMEOUT", "500ms"}}).dump_stall_timeout,
            std::chrono::milliseconds(500));
  for (const char* bad : {"2", "10ms", "2h", "never"}) {
    AgentConfig c = FromMap({{"MEMPROF_DUMP_STALL_TIMEOUT", bad}});
    EXPECT_EQ(c.dump_stall_timeout, std::chrono::seconds(30)) << bad;
    ASSERT_EQ(c.warnings.size(), 1u) << bad;
    EXPECT_NE(c.warnings[0].find("MEMPROF_DUMP_STALL_TIMEOUT ignored"), std::string::npos)
        << c.warnings[0];
  }
}

}  // namespace
}  // namespace memprof::agent

namespace memprof::agent {
namespace {

constexpr char kHowToSetTls[] =
    "set MEMPROF_TLS_CERT (the agent's certificate chain, PEM), MEMPROF_TLS_KEY (its private "
    "key, PEM) and MEMPROF_TLS_CA (the CA certificates that client certificates must chain to, "
    "PEM)";

std::map<std::string, std::string> FullRemoteEnv(const std::string& listen) {
  return {{"MEMPROF_LISTEN", listen},
          {"MEMPROF_TLS_CERT", "/etc/memprof/agent.crt"},
          {"MEMPROF_TLS_KEY", "/etc/memprof/agent.key"},
          {"MEMPROF_TLS_CA", "/etc/memprof/clients-ca.crt"}};
}

TEST(AgentConfigRemoteTest, NoListenerUnlessConfigured) {
  EXPECT_EQ(FromMap({}).remote, std::nullopt);
}

TEST(AgentConfigRemoteTest, ListenWithAllTlsFiles) {
  AgentConfig c = FromMap(FullRemoteEnv("10.77.0.1:7070"));
  ASSERT_TRUE(c.remote.has_value());
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_EQ(c.remote->address.ToString(), "10.77.0.1:7070");
  EXPECT_EQ(c.remote->cert_path, "/etc/memprof/agent.crt");
  EXPECT_EQ(c.remote->key_path, "/etc/memprof/agent.key");
  EXPECT_EQ(c.remote->ca_path, "/etc/memprof/clients-ca.crt");
}

TEST(AgentConfigRemoteTest, AcceptsIpv4Ipv6AnyAndLocalhost) {
  EXPECT_EQ(FromMap(FullRemoteEnv("0.0.0.0:1")).remote->address.ToString(), "0.0.0.0:1");
  EXPECT_EQ(FromMap(FullRemoteEnv("[::1]:65535")).remote->address.ToString(), "[::1]:65535");
  EXPECT_EQ(FromMap(FullRemoteEnv("[::]:7070")).remote->address.ToString(), "[::]:7070");
  EXPECT_EQ(FromMap(FullRemoteEnv("localhost:7070")).remote->address.ToString(),
            "127.0.0.1:7070");
}

// Loopback too: over TCP there is no SO_PEERCRED, so TLS is never optional.
TEST(AgentConfigRemoteTest, ListenWithoutTlsIsRefusedEvenOnLoopback) {
  AgentConfig c = FromMap({{"MEMPROF_LISTEN", "127.0.0.1:7070"}});
  EXPECT_EQ(c.remote, std::nullopt);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0],
            std::string("not listening on TCP: MEMPROF_LISTEN=127.0.0.1:7070 requires mutual "
                        "TLS, but MEMPROF_TLS_CERT, MEMPROF_TLS_KEY and MEMPROF_TLS_CA are not "
                        "set; ") +
                kHowToSetTls);
}

TEST(AgentConfigRemoteTest, EachMissingTlsVariableIsNamed) {
  auto env = FullRemoteEnv("10.0.0.5:7070");
  env.erase("MEMPROF_TLS_KEY");
  AgentConfig c = FromMap(env);
  EXPECT_EQ(c.remote, std::nullopt);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0],
            std::string("not listening on TCP: MEMPROF_LISTEN=10.0.0.5:7070 requires mutual "
                        "TLS, but MEMPROF_TLS_KEY is not set; ") +
                kHowToSetTls);

  env = FullRemoteEnv("10.0.0.5:7070");
  env["MEMPROF_TLS_CERT"] = "";  // set but empty counts as not set
  env.erase("MEMPROF_TLS_CA");
  c = FromMap(env);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("but MEMPROF_TLS_CERT and MEMPROF_TLS_CA are not set; "),
            std::string::npos)
      << c.warnings[0];
}

TEST(AgentConfigRemoteTest, MalformedAddressesAreRefusedWithTheReason) {
  const std::string examples =
      "; expected IP:PORT, e.g. 10.0.0.5:7070, [::1]:7070, localhost:7070 or 0.0.0.0:7070";
  const std::pair<std::string, std::string> cases[] = {
      {"10.0.0.5", "invalid address '10.0.0.5': missing ':PORT'"},
      {"10.0.0.5:0", "invalid address '10.0.0.5:0': the port must be a number from 1 to 65535"},
      {"10.0.0.5:65536",
       "invalid address '10.0.0.5:65536': the port must be a number from 1 to 65535"},
      {"10.0.0.5:http",
       "invalid address '10.0.0.5:http': the port must be a number from 1 to 65535"},
      {"10.0.0.5:-1", "invalid address '10.0.0.5:-1': the port must be a number from 1 to 65535"},
      {":7070", "invalid address ':7070': the host is missing"},
      {"::1:7070", "invalid address '::1:7070': an IPv6 address goes in brackets"},
      {"[::1]7070", "invalid address '[::1]7070': missing ']:PORT'"},
      {"[10.0.0.5]:7070", "invalid address '[10.0.0.5]:7070': '10.0.0.5' is not an IPv6 address"},
      {"memprof.example.com:7070",
       "invalid address 'memprof.example.com:7070': 'memprof.example.com' is not an IP address "
       "(host names are not resolved)"},
      {"999.0.0.1:7070",
       "invalid address '999.0.0.1:7070': '999.0.0.1' is not an IP address (host names are not "
       "resolved)"},
  };
  for (const auto& [listen, why] : cases) {
    AgentConfig c = FromMap(FullRemoteEnv(listen));
    EXPECT_EQ(c.remote, std::nullopt) << listen;
    ASSERT_EQ(c.warnings.size(), 1u) << listen;
    EXPECT_EQ(c.warnings[0], "not listening on TCP: MEMPROF_LISTEN: " + why + examples);
  }
}

TEST(AgentConfigRemoteTest, TlsFilesWithoutListenAreNamedAsIgnored) {
  AgentConfig c = FromMap({{"MEMPROF_TLS_CERT", "/a.crt"}, {"MEMPROF_TLS_KEY", "/a.key"}});
  EXPECT_EQ(c.remote, std::nullopt);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0],
            "not listening on TCP: MEMPROF_TLS_CERT and MEMPROF_TLS_KEY are set but "
            "MEMPROF_LISTEN is not; set MEMPROF_LISTEN=HOST:PORT to serve remote clients");
}

}  // namespace
}  // namespace memprof::agent
