#include "daemon/http/connection_slots.h"

#include <utility>

namespace iowatch::daemon::http::internal {

ConnectionSlots::Admission ConnectionSlots::Admit(const std::string& client) const {
  const size_t mine = Holding(client);
  if (mine >= PerClientConnections(max_)) return {};
  if (!full()) return {.admit = true};
  const Victim victim = FindVictim();
  if (victim.id == 0) return {};  // every slot is answering a request
  if (mine != 0 && mine + 2 > victim.holding) return {};
  return {.admit = true, .evict = victim.id};
}

ConnectionSlots::Victim ConnectionSlots::FindVictim() const {
  Victim best;
  uint64_t best_since = 0;
  for (const auto& [id, slot] : slots_) {
    if (!slot.waiting) continue;
    const size_t holding = Holding(slot.client);
    if (best.id == 0 || holding > best.holding ||
        (holding == best.holding && slot.since < best_since)) {
      best = {.id = id, .holding = holding};
      best_since = slot.since;
    }
  }
  return best;
}

void ConnectionSlots::Add(uint64_t id, std::string client) {
  ++per_client_[client];
  slots_.insert_or_assign(id, Slot{.client = std::move(client), .since = next_since_++});
}

void ConnectionSlots::Remove(uint64_t id) {
  const auto it = slots_.find(id);
  if (it == slots_.end()) return;
  const auto count = per_client_.find(it->second.client);
  if (count != per_client_.end() && --count->second == 0) per_client_.erase(count);
  slots_.erase(it);
}

void ConnectionSlots::SetWaiting(uint64_t id, bool waiting) {
  const auto it = slots_.find(id);
  if (it == slots_.end() || it->second.waiting == waiting) return;
  it->second.waiting = waiting;
  if (waiting) it->second.since = next_since_++;
}

size_t ConnectionSlots::Holding(const std::string& client) const {
  const auto it = per_client_.find(client);
  return it == per_client_.end() ? 0 : it->second;
}

}  // namespace iowatch::daemon::http::internal
