#include "agent/service/memory_profile_service.h"

#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/auth_context.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <limits>

#include "agent/heap/purge.h"
#include "agent/logging/agent_logger.h"
#include "agent/sampler/sampler.h"
#include "agent/service/dump_reactor.h"
#include "agent/service/status_mapping.h"
#include "agent/service/watch_reactor.h"
#include "common/duration.h"
#include "common/version.h"

namespace memprof::agent {
namespace {

// Runs `body`, turning an Error or a stray exception into a gRPC status.
grpc::Status RunGuarded(const std::function<Result<void>()>& body) {
  grpc::Status status;
  try {
    auto r = body();
    if (!r) status = ToGrpcStatus(r.error());
  } catch (const std::exception& e) {
    Logger().error("request failed: {}", e.what());
    status = grpc::Status(grpc::StatusCode::INTERNAL, std::string("agent error: ") + e.what());
  } catch (...) {
    status = grpc::Status(grpc::StatusCode::INTERNAL, "agent error");
  }
  return status;
}

v1::AllocatorKind ToProto(AllocatorKind kind) {
  switch (kind) {
    case AllocatorKind::kJemalloc: return v1::ALLOCATOR_KIND_JEMALLOC;
    case AllocatorKind::kGlibc: return v1::ALLOCATOR_KIND_GLIBC;
    case AllocatorKind::kOther: return v1::ALLOCATOR_KIND_OTHER;
    case AllocatorKind::kTcmalloc: return v1::ALLOCATOR_KIND_TCMALLOC;
  }
  return v1::ALLOCATOR_KIND_UNSPECIFIED;
}

// What memprof's own sampler says of itself, for Status.
void FillSamplerStatus(v1::StatusResponse& r) {
  const SamplerStatus sampler = Sampler::Status();
  r.set_sampler_since_unix_ms(sampler.since_unix_ms);
  for (const std::string& line : sampler.not_intercepted) r.add_sampler_not_intercepted(line);
}

v1::RawStatsFormat ToProto(ReportFormat format) {
  switch (format) {
    case ReportFormat::kJson: return v1::RAW_STATS_FORMAT_JSON;
    case ReportFormat::kText: return v1::RAW_STATS_FORMAT_TEXT;
    case ReportFormat::kXml: return v1::RAW_STATS_FORMAT_XML;
  }
  return v1::RAW_STATS_FORMAT_NONE;
}

void ToProto(const ProfilingState& state, v1::ProfilingState& out) {
  out.set_active(state.active);
  out.set_window_end_unix_ms(state.window_end_unix_ms);
}

void ToProto(const CaptureState& state, v1::CaptureState& out) {
  out.set_armed(state.armed);
  out.set_growth_bytes(state.growth_bytes);
  out.set_keep(state.keep);
  out.set_high_water_bytes(state.high_water_bytes);
  out.set_taken_total(state.taken_total);
  for (const CaptureInfo& info : state.held) {
    auto* held = out.add_held();
    held->set_sequence(info.sequence);
    held->set_created_unix_ms(info.created_unix_ms);
    held->set_allocated_bytes(info.allocated_bytes);
    held->set_size_bytes(info.size_bytes);
    held->set_trigger(info.trigger == CaptureTrigger::kNearLimit
                          ? v1::CAPTURE_TRIGGER_NEAR_LIMIT
                          : v1::CAPTURE_TRIGGER_GROWTH);
    held->set_cgroup_usage_bytes(info.cgroup_usage_bytes);
    held->set_cgroup_limit_bytes(info.cgroup_limit_bytes);
  }
  out.set_near_limit_percent(state.near_limit_percent);
  out.set_next_near_limit_percent(state.next_near_limit_percent);
}

void ToProto(const AllocationRecorder::State& state, v1::AllocationWindowState& out) {
  out.set_open_window(state.open_window);
  out.set_window_end_unix_ms(state.window_end_unix_ms);
  out.set_record_bound(static_cast<uint64_t>(state.record_bound));
  out.set_held_profile(state.held_profile);
}

void ToProto(const CgroupMemoryLimit& limit, v1::MemoryLimit& out) {
  out.set_cgroup_version(static_cast<uint32_t>(limit.version));
  out.set_cgroup(limit.cgroup);
  out.set_source(limit.source);
  out.set_limit_bytes(limit.limit_bytes);
  out.set_usage_bytes(limit.usage_bytes);
}

// The memory limit now, or why it is unknown.
void FillMemoryLimit(v1::StatusResponse& r) {
  auto limit = ReadCgroupMemoryLimit();
  if (!limit) {
    r.set_memory_limit_error(limit.error().message);
  } else if (limit->has_value()) {
    ToProto(**limit, *r.mutable_memory_limit());
  }
}

// The first value of an auth-context property, or "".
std::string FirstProperty(const grpc::AuthContext& auth, const char* name) {
  auto values = auth.FindPropertyValues(name);
  return values.empty() ? std::string() : std::string(values.front().data(), values.front().size());
}

void ToProto(const HeapSummary& summary, v1::StatsSummary& s) {
  s.set_allocated(summary.allocated);
  s.set_active(summary.active);
  s.set_metadata(summary.metadata);
  s.set_resident(summary.resident);
  s.set_mapped(summary.mapped);
  s.set_retained(summary.retained);
}

void ToProto(const MemoryReading& reading, v1::PurgeReading& out) {
  out.set_rss_bytes(reading.rss_bytes);
  ToProto(reading.summary, *out.mutable_summary());
  out.set_unused_bytes(reading.unused_bytes);
}

CaptureSettings CaptureSettingsOf(const v1::ActivateRequest& request) {
  return CaptureSettings{.growth_bytes = request.capture_growth_bytes(),
                         .keep = request.capture_keep() == 0 ? kDefaultCaptureKeep
                                                             : request.capture_keep(),
                         .near_limit_percent = request.capture_near_limit_percent()};
}

// A client may copy the dump out of the agent's file itself only on this
// host: over the Unix socket (a connection the acceptor adopted, "fd:<n>";
// or "unix:" in tests that listen on a path), never over TCP.
bool OnLocalSocket(const grpc::CallbackServerContext& context) {
  const std::string peer = context.peer();
  return peer.starts_with("fd:") || peer.starts_with("unix");
}

DumpReactor::Header DumpHeader(int32_t pid, uint64_t sample_interval_bytes,
                               const grpc::CallbackServerContext& context,
                               const v1::DumpRequest& request, DumpLinger& linger) {
  DumpReactor::Header header{pid, sample_interval_bytes};
  header.local_file = request.local_file() && OnLocalSocket(context);
  header.linger = &linger;
  return header;
}

bool AsksForCapture(const v1::ActivateRequest& request) {
  return request.capture_growth_bytes() != 0 || request.capture_near_limit_percent() != 0;
}

}  // namespace

CallPeer CallPeerOf(const grpc::CallbackServerContext& context) {
  CallPeer peer;
  peer.address = context.peer();
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (!auth) return peer;
  peer.transport_security = FirstProperty(*auth, GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME);
  peer.client_certificate = !FirstProperty(*auth, GRPC_X509_PEM_CERT_PROPERTY_NAME).empty();
  peer.certificate_subject = FirstProperty(*auth, GRPC_X509_SUBJECT_PROPERTY_NAME);
  if (peer.certificate_subject.empty()) {
    const std::string cn = FirstProperty(*auth, GRPC_X509_CN_PROPERTY_NAME);
    if (!cn.empty()) peer.certificate_subject = "CN=" + cn;
  }
  return peer;
}

std::optional<grpc::Status> MemoryProfileService::Refusal(
    const grpc::CallbackServerContext& context) const {
  if (!authorizer_) return std::nullopt;
  auto refusal = authorizer_(CallPeerOf(context));
  if (!refusal) return std::nullopt;
  // info, not warn: a peer refused over and over must not flood the host's stderr.
  Logger().info("refused a request: {}", *refusal);
  return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, *refusal);
}

grpc::ServerUnaryReactor* MemoryProfileService::Answer(grpc::CallbackServerContext* context,
                                                       const std::function<Result<void>()>& body) {
  calls_.Begin();
  auto refusal = Refusal(*context);
  grpc::Status status = refusal ? *refusal : RunGuarded(body);
  auto* reactor = context->DefaultReactor();
  reactor->Finish(status);
  calls_.End();
  return reactor;
}

grpc::ServerUnaryReactor* MemoryProfileService::Status(grpc::CallbackServerContext* context,
                                                       const v1::StatusRequest*,
                                                       v1::StatusResponse* response) {
  return Answer(context, [&] { return FillStatus(*response); });
}

grpc::ServerUnaryReactor* MemoryProfileService::Activate(grpc::CallbackServerContext* context,
                                                         const v1::ActivateRequest* request,
                                                         v1::ActivateResponse* response) {
  return Answer(context, [&] { return DoActivate(*request, *response); });
}

grpc::ServerUnaryReactor* MemoryProfileService::Deactivate(grpc::CallbackServerContext* context,
                                                           const v1::DeactivateRequest* request,
                                                           v1::DeactivateResponse* response) {
  return Answer(context, [&] { return DoDeactivate(*request, *response); });
}

grpc::ServerUnaryReactor* MemoryProfileService::Stats(grpc::CallbackServerContext* context,
                                                      const v1::StatsRequest* request,
                                                      v1::StatsResponse* response) {
  return Answer(context, [&] { return FillStats(*request, *response); });
}

grpc::ServerUnaryReactor* MemoryProfileService::Purge(grpc::CallbackServerContext* context,
                                                      const v1::PurgeRequest*,
                                                      v1::PurgeResponse* response) {
  return Answer(context, [&] { return DoPurge(*response); });
}

grpc::ServerWriteReactor<v1::DumpChunk>* MemoryProfileService::Dump(
    grpc::CallbackServerContext* context, const v1::DumpRequest* request) {
  if (auto refusal = Refusal(*context)) return new DumpReactor(calls_, *refusal);
  if (request->capture_sequence() != 0) return StreamCapture(context, *request);
  if (request->allocation_window() != 0) return StreamAllocations(context, *request);
  try {
    auto header = DumpHeader(identity_.pid, allocator_.Info().sample_interval_bytes, *context,
                             *request, linger_);
    if (auto profiler = allocator_.ReadyProfiler()) header.format = (*profiler)->Format();
    auto* reactor = new DumpReactor(calls_, context, dumps_, header, request->chunk_size_bytes());
    reactor->Start();  // the dump now, or a place in the queue
    return reactor;
  } catch (const std::exception& e) {
    Logger().error("dump failed: {}", e.what());
    return new DumpReactor(calls_, grpc::Status(grpc::StatusCode::INTERNAL, e.what()));
  }
}

grpc::ServerWriteReactor<v1::DumpChunk>* MemoryProfileService::StreamCapture(
    grpc::CallbackServerContext* context, const v1::DumpRequest& request) {
  try {
    auto opened = captures_.Open(request.capture_sequence());
    if (!opened) return new DumpReactor(calls_, ToGrpcStatus(opened.error()));
    auto header =
        DumpHeader(identity_.pid, opened->info.sample_interval_bytes, *context, request, linger_);
    auto* reactor = new DumpReactor(calls_, context, dumps_, header, request.chunk_size_bytes());
    reactor->StartWith(std::move(opened->dump));
    return reactor;
  } catch (const std::exception& e) {
    Logger().error("streaming a capture failed: {}", e.what());
    return new DumpReactor(calls_, grpc::Status(grpc::StatusCode::INTERNAL, e.what()));
  }
}

grpc::ServerWriteReactor<v1::DumpChunk>* MemoryProfileService::StreamAllocations(
    grpc::CallbackServerContext* context, const v1::DumpRequest& request) {
  try {
    auto profile = allocations_.Fetch(request.allocation_window());
    if (!profile) return new DumpReactor(calls_, ToGrpcStatus(profile.error()));
    auto header = DumpHeader(identity_.pid, allocator_.Info().sample_interval_bytes, *context,
                             request, linger_);
    header.format = kAllocationProfileFormat;
    auto* reactor = new DumpReactor(calls_, context, dumps_, header, request.chunk_size_bytes());
    reactor->StartWith(std::move(*profile));
    return reactor;
  } catch (const std::exception& e) {
    Logger().error("streaming an allocation profile failed: {}", e.what());
    return new DumpReactor(calls_, grpc::Status(grpc::StatusCode::INTERNAL, e.what()));
  }
}

grpc::ServerWriteReactor<v1::WatchEvent>* MemoryProfileService::Watch(
    grpc::CallbackServerContext* context, const v1::WatchRequest* /*request*/) {
  if (auto refusal = Refusal(*context)) return new WatchReactor(calls_, *refusal);
  return new WatchReactor(calls_, changes_, [this] {
    v1::WatchEvent event;
    ToProto(captures_.State(), *event.mutable_capture());
    ToProto(allocations_.CurrentState(), *event.mutable_allocation_window());
    event.set_sent_unix_ms(NowUnixMs());
    return event;
  });
}

grpc::ServerUnaryReactor* MemoryProfileService::OpenAllocationWindow(
    grpc::CallbackServerContext* context, const v1::AllocationWindowRequest* request,
    v1::AllocationWindowResponse* response) {
  return Answer(context, [&] { return DoOpenAllocationWindow(*request, *response); });
}

Result<void> MemoryProfileService::DoOpenAllocationWindow(const v1::AllocationWindowRequest& request,
                                                          v1::AllocationWindowResponse& response) {
  AllocationWindowRequest window;
  window.duration = std::chrono::milliseconds(
      std::min<uint64_t>(request.duration_ms(), std::numeric_limits<int64_t>::max()));
  window.record_bound = static_cast<int64_t>(
      std::min<uint64_t>(request.record_bound(), std::numeric_limits<int64_t>::max()));
  auto opened = allocations_.Open(window);
  if (!opened) return Fail(opened.error());
  response.set_window(opened->id);
  response.set_window_end_unix_ms(opened->end_unix_ms);
  response.set_record_bound(static_cast<uint64_t>(opened->record_bound));
  response.set_sample_interval_bytes(opened->sample_interval_bytes);
  response.set_profiling_activated(opened->profiling_activated);
  return {};
}

Result<void> MemoryProfileService::FillStatus(v1::StatusResponse& r) const {
  // Read first: the state reported below is then at least as new as the
  // generation, so a client that passes it back as if_generation is refused
  // rather than wrongly allowed if the two straddle a change.
  r.set_activation_generation(profiling_.Generation());
  r.set_pid(identity_.pid);
  r.set_executable(identity_.executable);
  for (const auto& arg : identity_.command_line) r.add_command_line(arg);
  // Now, not at start: a service may have given up root for good since.
  r.set_uid(::geteuid());
  r.set_agent_version(kVersion);
  const AllocatorInfo info = allocator_.Info();
  r.set_allocator(ToProto(info.kind));
  r.set_allocator_version(info.version);
  r.set_profiling_supported(info.profiling_supported);
  r.set_profiling_enabled(info.profiling_enabled);
  r.set_profiling_active(info.profiling_active);
  r.set_sample_interval_bytes(info.sample_interval_bytes);
  r.set_sampler(info.sampler);
  if (info.sampler == "memprof") FillSamplerStatus(r);
  r.set_malloc_conf(identity_.malloc_conf);
  r.set_window_end_unix_ms(profiling_.WindowEndUnixMs());
  r.set_dumps_served(dumps_.DumpsServed());
  r.set_rss_bytes(CurrentRssBytes());
  r.set_agent_started_unix_ms(identity_.started_unix_ms);
  r.set_started_by(identity_.started_by);
  ToProto(captures_.State(), *r.mutable_capture());
  ToProto(allocations_.CurrentState(), *r.mutable_allocation_window());
  FillMemoryLimit(r);
  return {};
}

Result<void> MemoryProfileService::DoActivate(const v1::ActivateRequest& request,
                                              v1::ActivateResponse& response) {
  ActivationRequest activation;
  if (request.duration_ms() > 0) {
    activation.window = std::chrono::milliseconds(static_cast<int64_t>(
        std::min<uint64_t>(request.duration_ms(), static_cast<uint64_t>(INT64_MAX))));
  }
  activation.sample_interval_bytes = request.sample_interval_bytes();
  activation.reset = request.reset();
  activation.if_generation = request.if_generation();
  if (AsksForCapture(request)) {  // bounds first: a bad request changes nothing
    if (auto ok = CheckCaptureSettings(CaptureSettingsOf(request)); !ok) return ok;
    if (allocator_.Info().sampler == "tcmalloc") {
      return Fail(ErrorCode::kFailedPrecondition,
                  "peak capture (--capture-growth, --capture-near-limit) needs jemalloc's "
                  "profiler or memprof's own sampler, and this process's tcmalloc samples by "
                  "itself (TCMALLOC_SAMPLE_PARAMETER); nothing was changed. Activate without "
                  "them and dump when the memory is high");
    }
    if (request.capture_near_limit_percent() != 0) {
      if (auto limit = RequireMemoryLimit(); !limit) return Fail(limit.error());
    }
  }
  auto change = profiling_.Activate(activation);
  if (!change) return Fail(change.error());
  if (auto armed = ApplyCapture(request); !armed) return armed;
  ToProto(change->previous, *response.mutable_previous());
  ToProto(change->current, *response.mutable_current());
  response.set_window_replaced(change->window_replaced);
  response.set_sample_interval_bytes(change->sample_interval_bytes);
  response.set_previous_sample_interval_bytes(change->previous_sample_interval_bytes);
  response.set_samples_reset(change->samples_reset);
  response.set_activation_generation(change->generation);
  ToProto(captures_.State(), *response.mutable_capture());
  return {};
}

// Arms peak capture after the activation it needs (profiling must be active
// for a capture to show anything).
Result<void> MemoryProfileService::ApplyCapture(const v1::ActivateRequest& request) {
  if (!AsksForCapture(request)) return {};
  auto armed = captures_.Arm(CaptureSettingsOf(request));
  if (!armed) return Fail(armed.error());
  return {};
}

Result<void> MemoryProfileService::DoDeactivate(const v1::DeactivateRequest& request,
                                                v1::DeactivateResponse& response) {
  auto change = profiling_.Deactivate(request.if_generation());
  if (!change) return Fail(change.error());
  captures_.Disarm();
  ToProto(change->previous, *response.mutable_previous());
  ToProto(change->current, *response.mutable_current());
  response.set_activation_generation(change->generation);
  ToProto(captures_.State(), *response.mutable_capture());
  return {};
}

Result<void> MemoryProfileService::FillStats(const v1::StatsRequest& request,
                                             v1::StatsResponse& response) const {
  response.set_allocator(ToProto(allocator_.Info().kind));
  auto summary = allocator_.Summary();
  if (!summary) return Fail(summary.error());
  ToProto(*summary, *response.mutable_summary());
  for (const auto& [name, value] : allocator_.Properties()) {
    (*response.mutable_allocator_properties())[name] = value;
  }
  response.set_rss_bytes(CurrentRssBytes());
  response.set_collected_unix_ms(NowUnixMs());
  response.set_profiling_active(allocator_.Info().profiling_active);
  const CaptureState capture = captures_.State();
  response.set_captures_held(capture.held.size());
  response.set_captures_taken_total(capture.taken_total);
  if (request.raw_format() == v1::RAW_STATS_FORMAT_NONE) return {};
  const bool json = request.raw_format() == v1::RAW_STATS_FORMAT_JSON;
  auto report = allocator_.Report(json ? ReportFormat::kJson : ReportFormat::kText);
  if (!report) return Fail(report.error());
  response.set_raw_format(ToProto(report->format));
  response.set_raw(std::move(report->text));
  return {};
}

Result<void> MemoryProfileService::DoPurge(v1::PurgeResponse& response) const {
  auto outcome = PurgeAndMeasure(allocator_);
  if (!outcome) return Fail(outcome.error());
  response.set_allocator(ToProto(allocator_.Info().kind));
  ToProto(outcome->before, *response.mutable_before());
  ToProto(outcome->after, *response.mutable_after());
  response.set_method(outcome->method);
  return {};
}

}  // namespace memprof::agent
