#include "cli/client/dump_receiver.h"

#include <utility>

#include "cli/io/logging.h"

namespace memprof::cli {

DumpReceiver::DumpReceiver(Writer write, pid_t local_pid)
    : write_(std::move(write)), local_pid_(local_pid) {}

Result<void> DumpReceiver::OnChunk(const memprof::v1::DumpChunk& chunk) {
  using Chunk = memprof::v1::DumpChunk;
  if (have_trailer_) return TransferLoss("data after the trailer");
  switch (chunk.payload_case()) {
    case Chunk::kMetadata:
      return OnMetadata(chunk.metadata());
    case Chunk::kData:
      return OnData(chunk.data());
    case Chunk::kTrailer:
      return OnTrailer(chunk.trailer());
    case Chunk::kProgress:
      return OnProgress(chunk.progress());
    case Chunk::PAYLOAD_NOT_SET:
      return {};  // a newer agent's chunk kind: skip it
  }
  return {};
}

Result<void> DumpReceiver::OnMetadata(const memprof::v1::DumpMetadata& metadata) {
  if (have_metadata_) return TransferLoss("the agent sent its metadata twice");
  have_metadata_ = true;
  metadata_ = metadata;
  if (metadata.file_inode() == 0) return {};
  if (local_pid_ == 0) return TransferLoss("the agent named its file, which was not asked for");
  auto opened = LocalDumpFile::Open(local_pid_, metadata);
  if (!opened) {
    local_file_refused_ = true;
    return Fail(opened.error());
  }
  local_file_ = std::move(*opened);
  Log().debug("copying the profile out of the agent's file, {}", local_file_->path());
  return {};
}

Result<void> DumpReceiver::OnData(const std::string& data) {
  if (!have_metadata_) return TransferLoss("the stream did not start with metadata");
  if (local_file_) return TransferLoss("the agent sent data for a file it named");
  return Accept(data);
}

Result<void> DumpReceiver::OnProgress(const memprof::v1::DumpProgress& progress) {
  if (!local_file_) return TransferLoss("the agent sent progress for a file it did not name");
  return CopyLocalUpTo(progress.written_bytes());
}

Result<void> DumpReceiver::CopyLocalUpTo(uint64_t end) {
  return local_file_->CopyUpTo(end, [this](std::string_view data) { return Accept(data); });
}

Result<void> DumpReceiver::Accept(std::string_view data) {
  received_ += data.size();
  if (SizeAnnounced() && received_ > metadata_.size_bytes()) {
    return TransferLoss("received more than the announced " +
                        std::to_string(metadata_.size_bytes()) + " bytes");
  }
  hash_.Update(data);
  return write_(data);
}

Result<void> DumpReceiver::OnTrailer(const memprof::v1::DumpTrailer& trailer) {
  if (!have_metadata_) return TransferLoss("the stream did not start with metadata");
  have_trailer_ = true;
  trailer_ = trailer;
  if (!local_file_) return {};
  auto copied = CopyLocalUpTo(trailer.size_bytes());
  local_file_->Close();
  return copied;
}

Result<DumpSummary> DumpReceiver::Finish() {
  if (!have_metadata_) return TransferLoss("the stream was empty");
  if (!have_trailer_) {
    const std::string of =
        SizeAnnounced() ? " of " + std::to_string(metadata_.size_bytes()) : std::string();
    return TransferLoss("the stream ended early (" + std::to_string(received_) + of + " bytes)");
  }
  if (trailer_.size_bytes() != received_ ||
      (SizeAnnounced() && metadata_.size_bytes() != received_)) {
    return TransferLoss("size mismatch (received " + std::to_string(received_) +
                        " bytes, announced " + std::to_string(metadata_.size_bytes()) +
                        ", trailer says " + std::to_string(trailer_.size_bytes()) + ")");
  }
  std::string digest = hash_.FinalHex();
  // A file copied here crossed no transport: the agent read none of it and
  // sends no checksum; the one reported is of the bytes copied.
  const bool unchecked = local_file_ && trailer_.sha256_hex().empty();
  if (!unchecked && digest != trailer_.sha256_hex()) {
    return TransferLoss("checksum mismatch (sha256 of received data " + digest + ", agent sent " +
                        trailer_.sha256_hex() + ")");
  }
  return DumpSummary{received_, std::move(digest), metadata_.sample_interval_bytes(),
                     metadata_.created_unix_ms(), metadata_.pid()};
}

}  // namespace memprof::cli
