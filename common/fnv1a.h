// FNV-1a, 64 bits: a fast hash of a byte string that never changes between
// versions or machines, for keys that outlive a process (the fleet's
// workload fingerprint) or must be cheap and allocation-free (the trace
// preload's file index). Not for anything an attacker may choose to collide.
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <string_view>

namespace iowatch {

constexpr uint64_t Fnv1a64(std::string_view text) {
  uint64_t hash = 14695981039346656037u;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211u;
  }
  return hash;
}

}  // namespace iowatch
