// ConnectionSlots: who holds the server's max_connections slots, and who may
// take one when they are all held. No sockets here: the server asks Admit()
// for each accepted connection and does what it says.
//
// The policy, against slow clients (slowloris) from one or many addresses:
// - One address may hold three quarters of the slots (all of them below 4);
//   beyond that it is refused, whatever is free.
// - A slot is free: admitted.
// - Every slot held: a connection that is waiting for its peer (its request
//   head not complete, a TLS handshake, or idle between keep-alive requests)
//   gives way to the newcomer, as nginx reuses connections waiting for a
//   request when it runs out. The victim is the longest-waiting connection of
//   the address holding the most slots, and only if the newcomer's address
//   holds none, or at least two fewer than the victim's (so the swap makes
//   the holdings more even, and equal floods do not churn each other). A
//   connection whose request is being answered never gives way.
// So a scraper that holds nothing always gets a slot while some slot is
// waiting, and slow clients from a few addresses share the slots evenly.
//
// Admit() scans the slots when all are held: O(max_connections), only on
// accepts at the cap, which the peer pays a TCP connection for.
// Thread-safety: none; the server uses it on its io_context thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace iowatch::daemon::http::internal {

// How many connections one client address may hold: three quarters of
// max_connections (all of them below 4), so that one address opening
// connections as fast as it can (slow request heads, reconnecting) leaves a
// quarter for everyone else. 1,000 slow-header clients from one address
// took 58 of 60 scrapes from another to 503 when the cap was only global.
inline size_t PerClientConnections(size_t max_connections) {
  return max_connections - max_connections / 4;
}

class ConnectionSlots {
 public:
  explicit ConnectionSlots(size_t max_connections) : max_(max_connections) {}

  struct Admission {
    bool admit = false;
    uint64_t evict = 0;  // non-zero: Remove() and close this one first
  };
  Admission Admit(const std::string& client) const;

  // A connection that took a slot, under the server's id for it; it starts
  // waiting (for its TLS handshake or request head).
  void Add(uint64_t id, std::string client);
  void Remove(uint64_t id);  // unknown ids are ignored (an evicted one's destructor)
  // Waiting for the peer (true), or answering a request or closing (false).
  // Waiting again after answering makes the connection the newest waiter.
  void SetWaiting(uint64_t id, bool waiting);

  size_t size() const { return slots_.size(); }
  bool full() const { return slots_.size() >= max_; }
  size_t Holding(const std::string& client) const;

 private:
  struct Slot {
    std::string client;
    bool waiting = true;
    uint64_t since = 0;  // order in which it started waiting: smaller is older
  };
  struct Victim {
    uint64_t id = 0;
    size_t holding = 0;  // slots its address holds
  };
  Victim FindVictim() const;

  size_t max_;
  std::unordered_map<uint64_t, Slot> slots_;
  std::unordered_map<std::string, size_t> per_client_;  // absent: none
  uint64_t next_since_ = 1;
};

}  // namespace iowatch::daemon::http::internal
