#ifndef MEMPROF_AGENT_SERVICE_PEER_REGISTRY_H_
#define MEMPROF_AGENT_SERVICE_PEER_REGISTRY_H_

#include <sys/types.h>

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/unix_socket.h"

namespace memprof::agent {

// Who is at the other end of each connection the acceptor hands to gRPC, so
// that the service can answer a peer without the right uid PERMISSION_DENIED
// (docs/contract.md rule 8) instead of silently hanging up on it.
//
// gRPC names a connection adopted from a descriptor "fd:<n>" (its peer
// string). A descriptor number is unique while its connection is open, and a
// later connection that reuses the number is recorded here before gRPC sees
// it, so the entry found for a request is always that of its own connection.
class PeerRegistry {
 public:
  struct Entry {
    pid_t pid = 0;
    uid_t uid = 0;
    bool allowed = false;
    uid_t owner = 0;  // the uid served besides root when it connected
  };

  // `owner` is the uid the agent's socket belongs to: that uid and root may
  // connect.
  explicit PeerRegistry(uid_t owner) : owner_(owner) {}

  // The socket changed hands (a process that gave up root for good hands
  // it to the user it became): connections recorded from now on are judged
  // against `owner`.
  void SetOwner(uid_t owner);

  // Records the credentials SO_PEERCRED gave for connection `fd`.
  Entry Record(int fd, const PeerCredentials& peer);

  // nullopt when the caller may proceed; otherwise the PERMISSION_DENIED
  // message for it. A peer string that is not a recorded connection (nothing
  // the acceptor handed over) is refused too.
  std::optional<std::string> Refusal(std::string_view grpc_peer) const;

 private:
  std::optional<Entry> Find(std::string_view grpc_peer) const;

  mutable std::mutex mu_;
  uid_t owner_;
  std::unordered_map<int, Entry> by_fd_;
};

// Whether a peer with uid `peer_uid` may talk to an agent whose socket
// belongs to `owner`.
bool PeerAllowed(uid_t peer_uid, uid_t owner);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SERVICE_PEER_REGISTRY_H_
