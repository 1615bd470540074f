// HTTP Basic authentication (RFC 7617) against bcrypt password hashes, as in
// Prometheus' exporter-toolkit web config: users map to "$2b$"/"$2y$"/"$2a$"
// hashes, verified with libxcrypt's crypt_rn and compared in constant time.
//
// bcrypt is slow on purpose (cost 10 is ~50-100 ms), far too slow for every
// scrape. A successful verification is therefore remembered: per user, an
// HMAC-SHA-256 of (user, password) under a random per-process key. Later
// requests with the same credentials cost one HMAC and a constant-time compare
// (IsCached); only the first request per credential, and every wrong password,
// pays for bcrypt (Verify). The server runs Verify on a worker thread so that
// it never stalls the io_context. The cache holds at most one entry per
// configured user, and no password or fast unkeyed hash of one.
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch::daemon::http {

struct BasicCredentials {
  std::string user;
  std::string password;
};

// Parses an Authorization header value "Basic <base64(user:password)>".
// std::nullopt for another scheme or malformed base64.
std::optional<BasicCredentials> ParseBasicAuthorization(std::string_view header);

// A new bcrypt hash of `password` ("$2b$<cost>$..."), for tests and for a
// future `hash-password` subcommand. cost 4..31; 10 or more in production.
Result<std::string> BcryptHash(std::string_view password, unsigned cost);

// Below this cost a leaked hash is cheap to brute-force (htpasswd's and
// exporter-toolkit's examples use 10).
inline constexpr int kMinRecommendedBcryptCost = 10;

// What the daemon logs at start for a valid user map: each user whose hash
// is cheaper than kMinRecommendedBcryptCost, and users of different costs
// (each check then pays for every cost). Empty when all is well.
std::vector<std::string> BasicAuthWarnings(const std::map<std::string, std::string>& users);

class BasicAuthenticator {
 public:
  // Fails (naming the user) for an empty user map, a user name containing ':'
  // or a hash that is not a well-formed bcrypt hash.
  static Result<std::shared_ptr<BasicAuthenticator>> Create(
      const std::map<std::string, std::string>& users);

  // Fast path: true if these exact credentials were verified before.
  bool IsCached(std::string_view user, std::string_view password) const;

  // Slow path: bcrypt verification, remembering success. Every call runs
  // bcrypt once at each distinct configured cost (the user's own hash at its
  // cost, a configured hash of that cost at the others), known user or not,
  // so that timing tells no name from another: with one cost for everyone,
  // that is one bcrypt per check.
  bool Verify(std::string_view user, std::string_view password);

 private:
  using Digest = std::array<unsigned char, 32>;
  struct Entry {
    std::string hash;
    std::optional<Digest> verified;  // HMAC of the last verified credentials
  };

  BasicAuthenticator() = default;
  Digest CredentialDigest(std::string_view user, std::string_view password) const;

  std::array<unsigned char, 32> hmac_key_{};
  mutable std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> users_;  // guarded by mutex_ (verified)
  std::map<int, std::string> cost_settings_;         // a configured hash per distinct cost
};

}  // namespace iowatch::daemon::http
