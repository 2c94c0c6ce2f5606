#include "tests/integration/harness/tls_fixture.h"

#include <fstream>
#include <vector>

#include "tests/integration/harness/command_runner.h"
#include "tests/integration/harness/support_names.h"
#include "tests/support/debian_tools.h"

namespace memprof::integration {
namespace {

using std::chrono::seconds;

// A config of our own, so that the system's openssl.cnf (whose defaults
// vary) plays no part. `req` needs a distinguished_name section.
constexpr char kConfig[] = R"([req]
distinguished_name = dn
prompt = no
[dn]
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
)";

std::string LeafExtensions(const std::string& usage, const std::string& san) {
  std::string text =
      "basicConstraints = CA:FALSE\nkeyUsage = critical,digitalSignature\n"
      "extendedKeyUsage = " +
      usage + "\nauthorityKeyIdentifier = keyid\n";
  if (!san.empty()) text += "subjectAltName = " + san + "\n";
  return text;
}

Result<void> WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Fail(ErrorCode::kInternal, "cannot write " + path);
  return {};
}

}  // namespace

Result<std::unique_ptr<TlsFixture>> TlsFixture::Create(const TlsFixtureOptions& options) {
  std::string openssl;
  if (auto can_run = test_support::CanRun(test_support::Openssl(), &openssl); !can_run) {
    return Fail(ErrorCode::kNotFound, can_run.message());
  }
  auto dir = TempDir::Create("memprof-tls");
  if (!dir) return Fail(dir.error());
  std::unique_ptr<TlsFixture> fixture(new TlsFixture(std::move(*dir), std::move(openssl)));
  if (auto ok = fixture->MakeAll(options); !ok) return Fail(ok.error());
  return fixture;
}

std::map<std::string, std::string> TlsFixture::AgentEnv() const {
  return {{"MEMPROF_TLS_CERT", files_.server_cert},
          {"MEMPROF_TLS_KEY", files_.server_key},
          {"MEMPROF_TLS_CA", files_.ca_cert}};
}

Result<void> TlsFixture::MakeAll(const TlsFixtureOptions& options) {
  if (auto ok = WriteText(dir_.File("openssl.cnf"), kConfig); !ok) return ok;
  const int days = options.valid_days;
  std::string san = "IP:" + options.server_ip;
  if (options.server_ip != "127.0.0.1") san += ",IP:127.0.0.1";
  san += ",DNS:localhost";
  Result<void> ok = MakeCa("ca", "memprof test CA", days);
  if (ok) ok = MakeCa("wrong-ca", "memprof wrong CA", days);
  if (ok) {
    ok = MakeLeaf("server", "ca", "memprof-agent", LeafExtensions("serverAuth", san), days);
  }
  if (ok) {
    ok = MakeLeaf("client", "ca", "memprof-client", LeafExtensions("clientAuth", ""), days);
  }
  if (ok) {
    ok = MakeLeaf("wrong-client", "wrong-ca", "memprof-client", LeafExtensions("clientAuth", ""),
                  days);
  }
  if (!ok) return ok;
  files_ =
      TlsFiles{dir_.File("ca.crt"),           dir_.File("wrong-ca.crt"),    dir_.File("server.crt"),
               dir_.File("server.key"),       dir_.File("client.crt"),      dir_.File("client.key"),
               dir_.File("wrong-client.crt"), dir_.File("wrong-client.key")};
  return {};
}

Result<void> TlsFixture::MakeCa(const std::string& name, const std::string& common_name, int days) {
  return Openssl({"req",
                  "-x509",
                  "-new",
                  "-newkey",
                  "ec",
                  "-pkeyopt",
                  "ec_paramgen_curve:prime256v1",
                  "-nodes",
                  "-keyout",
                  dir_.File(name + ".key"),
                  "-out",
                  dir_.File(name + ".crt"),
                  "-days",
                  std::to_string(days),
                  "-subj",
                  "/CN=" + common_name,
                  "-config",
                  dir_.File("openssl.cnf"),
                  "-extensions",
                  "ca"});
}

Result<void> TlsFixture::MakeLeaf(const std::string& name, const std::string& ca,
                                  const std::string& cn, const std::string& extensions, int days) {
  const std::string ext_file = dir_.File(name + ".ext");
  if (auto ok = WriteText(ext_file, extensions); !ok) return ok;
  if (auto ok =
          Openssl({"req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                   "-nodes", "-keyout", dir_.File(name + ".key"), "-out", dir_.File(name + ".csr"),
                   "-subj", "/CN=" + cn, "-config", dir_.File("openssl.cnf")});
      !ok) {
    return ok;
  }
  return Openssl({"x509", "-req", "-in", dir_.File(name + ".csr"), "-CA", dir_.File(ca + ".crt"),
                  "-CAkey", dir_.File(ca + ".key"), "-set_serial", std::to_string(next_serial_++),
                  "-days", std::to_string(days), "-extfile", ext_file, "-out",
                  dir_.File(name + ".crt")});
}

Result<void> TlsFixture::Openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {openssl_};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = RunCommand(argv, {}, seconds(60));
  if (r.exit_code != 0) {
    return Fail(ErrorCode::kInternal, JoinArgv(argv) + " failed (exit code " +
                                          std::to_string(r.exit_code) + "): " + r.err);
  }
  return {};
}

}  // namespace memprof::integration
