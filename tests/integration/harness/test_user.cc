#include "tests/integration/harness/test_user.h"

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <optional>

#include "tests/integration/harness/support_names.h"

namespace memprof::integration {
namespace {

constexpr const char* kSetprivPaths[] = {"/usr/bin/setpriv", "/bin/setpriv"};
constexpr const char* kUseraddPaths[] = {"/usr/sbin/useradd", "/sbin/useradd"};

template <size_t N>
std::optional<std::string> FindExecutable(const char* const (&paths)[N]) {
  for (const char* path : paths) {
    if (::access(path, X_OK) == 0) return std::string(path);
  }
  return std::nullopt;
}

std::optional<TestUser> LookUp() {
  // getpwnam_r: the test binary has other threads (output readers).
  passwd pw{};
  passwd* found = nullptr;
  char buf[4096];
  if (::getpwnam_r(kTestUserName, &pw, buf, sizeof(buf), &found) != 0 || found == nullptr) {
    return std::nullopt;
  }
  return TestUser{kTestUserName, pw.pw_uid, pw.pw_gid};
}

}  // namespace

std::vector<std::string> TestUser::Wrap(std::vector<std::string> argv) const {
  static const std::string setpriv = FindExecutable(kSetprivPaths).value_or("/usr/bin/setpriv");
  std::vector<std::string> out = {setpriv,
                                  "--reuid=" + std::to_string(uid),
                                  "--regid=" + std::to_string(gid),
                                  "--clear-groups",
                                  "--pdeathsig=keep",
                                  "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

Result<TestUser> EnsureTestUser() {
  if (::geteuid() != 0) {
    return Fail(ErrorCode::kFailedPrecondition,
                "needs root to create the unprivileged user " + std::string(kTestUserName) +
                    " and switch to it (the CI runs as root)");
  }
  if (!FindExecutable(kSetprivPaths)) {
    return Fail(ErrorCode::kFailedPrecondition, "setpriv (util-linux) is not installed");
  }
  if (auto user = LookUp()) return *user;
  auto useradd = FindExecutable(kUseraddPaths);
  if (!useradd) {
    return Fail(ErrorCode::kFailedPrecondition,
                std::string("user ") + kTestUserName + " does not exist and useradd is missing");
  }
  // Another test process may be creating it at the same moment (useradd then
  // fails on the lock or with "already exists"): retry until it exists.
  std::string last_error;
  WaitUntil(
      [&] {
        CommandResult r = RunCommand({*useradd, "--system", "--no-create-home", "--shell",
                                      "/usr/sbin/nologin", kTestUserName},
                                     {}, std::chrono::seconds(30));
        last_error = r.err;
        return LookUp().has_value();
      },
      std::chrono::seconds(20), std::chrono::milliseconds(200));
  if (auto user = LookUp()) return *user;
  return Fail(ErrorCode::kFailedPrecondition,
              std::string("cannot create user ") + kTestUserName + ": " + last_error);
}

}  // namespace memprof::integration
