#include "agent/service/dump_reactor.h"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <utility>

#include "agent/logging/agent_logger.h"
#include "agent/service/status_mapping.h"

namespace memprof::agent {

struct DumpReactor::Stream {
  std::mutex mu;
  std::condition_variable idle;  // alarms_running dropped to 0
  // All guarded by mu.
  grpc::CallbackServerContext* context = nullptr;  // null once the call is done
  std::unique_ptr<HeapDump> dump;                  // null until taken, and once freed
  uint64_t writes_done = 0;
  bool write_pending = false;
  bool stalled = false;
  int alarms_running = 0;  // stall alarms using `context` right now
  std::chrono::milliseconds stall_timeout{0};
};

DumpReactor::DumpReactor(CallTracker& calls, const grpc::Status& status) : calls_(calls) {
  calls_.Begin();
  Finish(status);
}

DumpReactor::DumpReactor(CallTracker& calls, grpc::CallbackServerContext* context,
                         DumpStreamer& dumps, Header header, uint32_t chunk_bytes)
    : calls_(calls),
      context_(context),
      dumps_(&dumps),
      header_(header),
      stall_timeout_(dumps.limits().stall_timeout),
      stream_(std::make_shared<Stream>()) {
  calls_.Begin();
  if (chunk_bytes != 0) chunk_bytes_ = std::clamp(chunk_bytes, kMinChunkBytes, kMaxChunkBytes);
  stream_->context = context;
  stream_->stall_timeout = stall_timeout_;
}

void DumpReactor::Start() {
  Result<std::optional<DumpSlot>> slot = std::optional<DumpSlot>();
  try {
    slot = dumps_->Reserve(*this);
  } catch (const std::exception& e) {  // nothing was queued
    Finish(grpc::Status(grpc::StatusCode::INTERNAL, e.what()));
    return;
  }
  if (!slot) {
    Finish(ToGrpcStatus(slot.error()));
    return;
  }
  if (*slot) {
    TakeDump(std::move(**slot));
    return;
  }
  // Queued: OnSlot may already be running on another thread, so nothing of
  // this reactor is touched here any more.
  Logger().debug("dump request queued: the agent is busy with other dumps");
}

void DumpReactor::OnSlot(DumpSlot slot) {
  if (context_->IsCancelled()) {
    // Gone while it waited (OnCancel found it no longer queued): the slot
    // goes on to the next waiter, and no dump is taken for nobody.
    slot.Release();
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away while waiting"));
    return;
  }
  TakeDump(std::move(slot));
}

// The dump is streamed while jemalloc writes it: the metadata goes out at
// once (with size 0: the trailer has the size), the writes that follow run
// on gRPC's threads and wait for jemalloc when they catch up with it, and
// jemalloc writes the dump on another of gRPC's threads (WriteDumpSoon):
// not on this one, because gRPC sends what a callback started only once the
// callback has returned (jemalloc writing here held the whole stream back). The call may end (the client going away, a stall)
// before jemalloc is done, so the writing counts as a call of its own, and
// nothing of this reactor is touched after Write().
void DumpReactor::TakeDump(DumpSlot slot) {
  // No exception may leave: this runs in a gRPC callback, or in another
  // call's (whichever freed the slot).
  std::function<void()> write_dump;
  try {
    auto started = dumps_->Begin(std::move(slot));
    if (!started) {
      Finish(ToGrpcStatus(started.error()));
      return;
    }
    SetMetadata(*started->dump);
    {
      std::lock_guard lock(stream_->mu);
      stream_->dump = std::move(started->dump);
    }
    write_dump = std::move(started->write);
  } catch (const std::exception& e) {
    Logger().error("dump failed: {}", e.what());
    Finish(grpc::Status(grpc::StatusCode::INTERNAL, e.what()));
    return;
  }
  WriteDumpSoon(calls_, std::move(write_dump));
  Write();
}

// The first chunk. The size is 0 for a dump still being written (the
// trailer has it).
void DumpReactor::SetMetadata(const HeapDump& dump) {
  auto* meta = chunk_.mutable_metadata();
  meta->set_format(header_.format);
  meta->set_size_bytes(dump.size());
  meta->set_sample_interval_bytes(header_.sample_interval_bytes);
  meta->set_created_unix_ms(dump.created_unix_ms());
  meta->set_pid(header_.pid);
  meta->set_sequence(dump.sequence());
  if (header_.local_file) {
    meta->set_file_descriptor(dump.descriptor());
    meta->set_file_device(dump.device());
    meta->set_file_inode(dump.inode());
    meta->set_file_thread(static_cast<int32_t>(::gettid()));  // shares the agent's descriptors
  }
}

void DumpReactor::StartWith(std::unique_ptr<HeapDump> dump) {
  SetMetadata(*dump);
  {
    std::lock_guard lock(stream_->mu);
    stream_->dump = std::move(dump);
  }
  Write();
}

void DumpReactor::WriteDumpSoon(CallTracker& calls, std::function<void()> write_dump) {
  struct Pending {
    grpc::Alarm alarm;
    std::function<void()> write;
  };
  auto* pending = new Pending{grpc::Alarm(), std::move(write_dump)};
  calls.Begin();
  // An alarm due now: its callback runs on gRPC's executor, a thread of its
  // own. gRPC keeps the alarm's state alive while its callback runs, so the
  // callback may delete the alarm.
  pending->alarm.Set(std::chrono::system_clock::now(), [pending, &calls](bool fired) {
    try {
      if (fired) pending->write();
    } catch (const std::exception& e) {
      Logger().error("writing a heap profile failed: {}", e.what());
    }
    delete pending;  // unrun, the writer ends the stream with an error; may free the slot
    calls.End();
  });
}

void DumpReactor::OnCancel() {
  // Still waiting: leave the queue (having held nothing) and end the call. A
  // call that has its slot ends through its writes (or OnSlot) instead.
  if (dumps_ != nullptr && dumps_->Withdraw(*this)) {
    Logger().debug("dump request left the queue: the client cancelled or its deadline passed");
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client gave up waiting for its turn"));
  }
}

void DumpReactor::OnDone() {
  std::unique_ptr<HeapDump> dump;
  if (stream_) {
    std::unique_lock lock(stream_->mu);
    stream_->context = nullptr;
    stream_->idle.wait(lock, [&] { return stream_->alarms_running == 0; });
    dump = std::move(stream_->dump);
  }
  if (dump && header_.local_file && header_.linger != nullptr) {
    header_.linger->Hold(std::move(dump));  // see DumpLinger: the client lets go first
  } else {
    dump.reset();  // releases the dump's memory and slot before the call counts as over
  }
  CallTracker& calls = calls_;
  delete this;
  calls.End();
}

void DumpReactor::OnWriteDone(bool ok) {
  bool stalled = false;
  uint64_t sequence = 0;
  {
    std::lock_guard lock(stream_->mu);
    stream_->write_pending = false;
    ++stream_->writes_done;
    stalled = stream_->stalled;
    if (stream_->dump) sequence = stream_->dump->sequence();
  }
  if (!ok) {
    // The client went away or cancelled (or the agent did, for a stall);
    // nothing more can be sent.
    if (!stalled) Logger().info("heap profile #{} not delivered: the client went away", sequence);
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "client went away"));
    return;
  }
  if (stalled) {
    Finish(grpc::Status(grpc::StatusCode::ABORTED, "the agent ended this dump: the client read "
                                                   "nothing for longer than the stall deadline"));
    return;
  }
  WriteNext();
}

void DumpReactor::WriteNext() {
  HeapDump* dump = stream_->dump.get();  // no alarm touches it: no write is pending
  if (dump == nullptr || chunk_.has_trailer()) {
    Finish(grpc::Status::OK);
    return;
  }
  if (header_.local_file) {
    if (auto set = SetProgress(*dump); !set) {
      Finish(ToGrpcStatus(set.error()));
      return;
    }
    Write();
    return;
  }
  std::string* data = chunk_.mutable_data();
  auto more = dump->ReadNext(chunk_bytes_, *data);
  if (!more) {
    Finish(ToGrpcStatus(more.error()));
    return;
  }
  if (!*more) {
    auto* trailer = chunk_.mutable_trailer();
    trailer->set_size_bytes(dump->size());
    trailer->set_sha256_hex(dump->FinalSha256Hex());
  }
  Write();
}

Result<void> DumpReactor::SetProgress(HeapDump& dump) {
  auto written = dump.NextExtent(chunk_bytes_);
  if (!written) return Fail(written.error());
  if (*written) {
    chunk_.mutable_progress()->set_written_bytes(**written);
  } else {
    chunk_.mutable_trailer()->set_size_bytes(dump.size());
  }
  return {};
}

// Arms a stall alarm for this write (replacing, and so cancelling, the
// previous write's), then starts it.
void DumpReactor::Write() {
  uint64_t writes_done = 0;
  {
    std::lock_guard lock(stream_->mu);
    stream_->write_pending = true;
    writes_done = stream_->writes_done;
  }
  auto alarm = std::make_unique<grpc::Alarm>();
  alarm->Set(std::chrono::system_clock::now() + stall_timeout_,
             [stream = stream_, writes_done](bool fired) {
               if (fired) OnStallAlarm(stream, writes_done);
             });
  stall_alarm_ = std::move(alarm);
  StartWrite(&chunk_);
}

void DumpReactor::OnStallAlarm(const std::shared_ptr<Stream>& stream, uint64_t writes_done) {
  std::unique_ptr<HeapDump> dump;
  grpc::CallbackServerContext* context = nullptr;
  {
    std::lock_guard lock(stream->mu);
    if (stream->context == nullptr || !stream->write_pending || stream->writes_done != writes_done ||
        stream->stalled) {
      return;  // the write completed (or the call ended) in time
    }
    stream->stalled = true;
    dump = std::move(stream->dump);
    context = stream->context;
    ++stream->alarms_running;  // OnDone waits before the context goes away
  }
  Logger().info("heap profile #{}: the client took nothing for {} ms; ending its stream and "
                "freeing its slot",
                dump ? dump->sequence() : 0, stream->stall_timeout.count());
  context->TryCancel();
  {
    std::lock_guard lock(stream->mu);
    --stream->alarms_running;
  }
  stream->idle.notify_all();
  dump.reset();  // frees the slot: the next waiter's dump may be taken on this thread
}

}  // namespace memprof::agent
