#include "agent/dump_reactor.h"

#include <algorithm>

#include "agent/agent_logger.h"
#include "agent/status_mapping.h"

namespace memprof::agent {

DumpReactor::DumpReactor(CallTracker& calls, const grpc::Status& status) : calls_(calls) {
  calls_.Begin();
  Finish(status);
}

DumpReactor::DumpReactor(CallTracker& calls, std::unique_ptr<HeapDump> dump, Header header,
                         uint32_t chunk_bytes)
    : calls_(calls), dump_(std::move(dump)) {
  calls_.Begin();
  if (chunk_bytes != 0) chunk_bytes_ = std::clamp(chunk_bytes, kMinChunkBytes, kMaxChunkBytes);
  auto* meta = chunk_.mutable_metadata();
  meta->set_format("jemalloc_heap_v2");
  meta->set_size_bytes(dump_->size());
  meta->set_sample_interval_bytes(header.sample_interval_bytes);
  meta->set_created_unix_ms(dump_->created_unix_ms());
  meta->set_pid(header.pid);
  meta->set_sequence(dump_->sequence());
  StartWrite(&chunk_);
}

void DumpReactor::OnDone() {
  CallTracker& calls = calls_;
  delete this;  // releases the dump (and its memory) before the call counts as over
  calls.End();
}

void DumpReactor::OnWriteDone(bool ok) {
  if (!ok) {
    // The client went away or cancelled; nothing more can be sent.
    if (dump_) Logger().info("heap profile #{} not delivered: the client went away", dump_->sequence());
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "client went away"));
    return;
  }
  WriteNext();
}

void DumpReactor::WriteNext() {
  if (!dump_ || chunk_.has_trailer()) {
    Finish(grpc::Status::OK);
    return;
  }
  std::string* data = chunk_.mutable_data();
  auto more = dump_->ReadNext(chunk_bytes_, *data);
  if (!more) {
    Finish(ToGrpcStatus(more.error()));
    return;
  }
  if (*more) {
    StartWrite(&chunk_);
    return;
  }
  auto* trailer = chunk_.mutable_trailer();
  trailer->set_size_bytes(dump_->size());
  trailer->set_sha256_hex(dump_->FinalSha256Hex());
  StartWrite(&chunk_);
}

}  // namespace memprof::agent
