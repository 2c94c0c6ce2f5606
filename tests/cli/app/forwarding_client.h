#ifndef MEMPROF_TESTS_CLI_APP_FORWARDING_CLIENT_H_
#define MEMPROF_TESTS_CLI_APP_FORWARDING_CLIENT_H_

#include "tests/cli/testing/fake_profile_client.h"

namespace memprof::cli::testing {

// Lets RunCli own a client while the test keeps (and inspects) the fake.
class ForwardingClient : public ProfileClient {
 public:
  explicit ForwardingClient(FakeProfileClient& fake) : fake_(fake) {}
  Result<memprof::v1::StatusResponse> Status(const Target& t) override { return fake_.Status(t); }
  Result<memprof::v1::ActivateResponse> Activate(const Target& t,
                                                 const memprof::v1::ActivateRequest& r) override {
    return fake_.Activate(t, r);
  }
  Result<memprof::v1::DeactivateResponse> Deactivate(
      const Target& t, const memprof::v1::DeactivateRequest& r) override {
    return fake_.Deactivate(t, r);
  }
  Result<memprof::v1::StatsResponse> Stats(const Target& t,
                                           const memprof::v1::StatsRequest& r) override {
    return fake_.Stats(t, r);
  }
  Result<memprof::v1::PurgeResponse> Purge(const Target& t) override { return fake_.Purge(t); }
  Result<void> Dump(const Target& t, const memprof::v1::DumpRequest& r,
                    const DumpChunkSink& sink) override {
    return fake_.Dump(t, r, sink);
  }

 private:
  FakeProfileClient& fake_;
};

}  // namespace memprof::cli::testing

#endif  // MEMPROF_TESTS_CLI_APP_FORWARDING_CLIENT_H_
