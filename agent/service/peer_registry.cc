#include "agent/service/peer_registry.h"

#include <charconv>

namespace memprof::agent {
namespace {

constexpr std::string_view kFdPeerPrefix = "fd:";

std::optional<int> FdFromPeer(std::string_view peer) {
  if (!peer.starts_with(kFdPeerPrefix)) return std::nullopt;
  peer.remove_prefix(kFdPeerPrefix.size());
  int fd = -1;
  auto [end, ec] = std::from_chars(peer.data(), peer.data() + peer.size(), fd);
  if (ec != std::errc() || end != peer.data() + peer.size() || fd < 0) return std::nullopt;
  return fd;
}

}  // namespace

bool PeerAllowed(uid_t peer_uid, uid_t owner) { return peer_uid == owner || peer_uid == 0; }

void PeerRegistry::SetOwner(uid_t owner) {
  std::lock_guard lock(mu_);
  owner_ = owner;
}

PeerRegistry::Entry PeerRegistry::Record(int fd, const PeerCredentials& peer) {
  std::lock_guard lock(mu_);
  Entry entry{peer.pid, peer.uid, PeerAllowed(peer.uid, owner_), owner_};
  by_fd_[fd] = entry;
  return entry;
}

std::optional<PeerRegistry::Entry> PeerRegistry::Find(std::string_view grpc_peer) const {
  auto fd = FdFromPeer(grpc_peer);
  if (!fd) return std::nullopt;
  std::lock_guard lock(mu_);
  auto it = by_fd_.find(*fd);
  if (it == by_fd_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> PeerRegistry::Refusal(std::string_view grpc_peer) const {
  auto entry = Find(grpc_peer);
  if (!entry) return "unknown connection " + std::string(grpc_peer) + "; refused";
  if (entry->allowed) return std::nullopt;
  const uid_t owner = entry->owner;
  const std::string who = owner == 0 ? "root" : "uid " + std::to_string(owner) + " and root";
  return "uid " + std::to_string(entry->uid) + " (pid " + std::to_string(entry->pid) +
         ") may not use this memprof agent: only " + who +
         " may; run memprofctl as the target's user or as root";
}

}  // namespace memprof::agent
