#include "daemon/http/basic_auth.h"

#include <crypt.h>
#include <fmt/ranges.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <set>

namespace iowatch::daemon::http {
namespace {

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Standard base64 with optional '=' padding (RFC 4648 section 4).
std::optional<std::string> Base64Decode(std::string_view in) {
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  if (in.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(in.size() * 3 / 4);
  unsigned bits = 0;
  int bit_count = 0;
  for (char c : in) {
    const int v = Base64Value(c);
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<unsigned>(v);
    bit_count += 6;
    if (bit_count >= 8) {
      bit_count -= 8;
      out.push_back(static_cast<char>((bits >> bit_count) & 0xFFu));
    }
  }
  return out;
}

bool IsBcryptHash(const std::string& hash) {
  const bool prefix =
      hash.starts_with("$2b$") || hash.starts_with("$2y$") || hash.starts_with("$2a$");
  return prefix && hash.size() == 60 && crypt_checksalt(hash.c_str()) == CRYPT_SALT_OK;
}

// The two digits after "$2b$" (IsBcryptHash has checked the layout).
int BcryptCost(const std::string& hash) { return (hash[4] - '0') * 10 + (hash[5] - '0'); }

// crypt_rn into a zeroed crypt_data; nullopt on failure (invalid setting,
// NUL in the phrase). The output is as long as the setting it was made from.
std::optional<std::string> Crypt(std::string_view password, const std::string& setting) {
  if (password.find('\0') != std::string_view::npos) return std::nullopt;
  std::string phrase(password);
  auto data = std::make_unique<crypt_data>();  // value-initialised: zeroed, as crypt_rn requires
  const char* out = crypt_rn(phrase.c_str(), setting.c_str(), data.get(), sizeof(crypt_data));
  OPENSSL_cleanse(phrase.data(), phrase.size());
  std::optional<std::string> result;
  if (out != nullptr && out[0] != '*') result.emplace(out);
  OPENSSL_cleanse(data.get(), sizeof(crypt_data));
  return result;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

std::vector<std::string> BasicAuthWarnings(const std::map<std::string, std::string>& users) {
  std::vector<std::string> warnings;
  std::set<int> costs;
  for (const auto& [user, hash] : users) {
    if (!IsBcryptHash(hash)) continue;  // Create refuses it
    costs.insert(BcryptCost(hash));
    if (BcryptCost(hash) < kMinRecommendedBcryptCost) {
      warnings.push_back(fmt::format(
          "basic auth user \"{}\": bcrypt cost {} is cheap to brute-force if the hash leaks; "
          "use {} or more (htpasswd -nBC {})",
          user, BcryptCost(hash), kMinRecommendedBcryptCost, kMinRecommendedBcryptCost));
    }
  }
  if (costs.size() > 1) {
    warnings.push_back(fmt::format(
        "basic auth: users have {} different bcrypt costs ({}); every password check now runs "
        "bcrypt once at each of them, so that timing does not tell the names apart: give every "
        "user the same cost",
        costs.size(), fmt::join(costs, ", ")));
  }
  return warnings;
}

std::optional<BasicCredentials> ParseBasicAuthorization(std::string_view header) {
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  constexpr std::string_view kScheme = "basic";
  if (header.size() <= kScheme.size() || header[kScheme.size()] != ' ') return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    const char c = header[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c) != kScheme[i]) return std::nullopt;
  }
  std::string_view token = header.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  auto decoded = Base64Decode(token);
  if (!decoded) return std::nullopt;
  const size_t colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  BasicCredentials credentials{decoded->substr(0, colon), decoded->substr(colon + 1)};
  OPENSSL_cleanse(decoded->data(), decoded->size());
  return credentials;
}

Result<std::string> BcryptHash(std::string_view password, unsigned cost) {
  if (cost < 4 || cost > 31) {
    return MakeError(ErrorCode::kInvalidArgument, "bcrypt cost must be from 4 to 31");
  }
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2b$", cost, nullptr, 0, setting, sizeof setting) == nullptr) {
    return ErrnoError(errno, "crypt_gensalt_rn failed", {});
  }
  auto hash = Crypt(password, setting);
  if (!hash) return MakeError(ErrorCode::kInvalidArgument, "crypt_rn refused the password");
  return *hash;
}

Result<std::shared_ptr<BasicAuthenticator>> BasicAuthenticator::Create(
    const std::map<std::string, std::string>& users) {
  if (users.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "basic auth needs at least one user");
  }
  std::shared_ptr<BasicAuthenticator> auth(new BasicAuthenticator());
  for (const auto& [user, hash] : users) {
    if (user.empty() || user.find(':') != std::string::npos) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("basic auth user \"{}\": a user name must be non-empty and "
                                   "must not contain ':'",
                                   user));
    }
    if (!IsBcryptHash(hash)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("basic auth user \"{}\": the password must be a bcrypt hash "
                                   "(\"$2b$10$...\", 60 characters, e.g. from htpasswd -nBC 10)",
                                   user));
    }
    auth->users_.emplace(user, Entry{hash, std::nullopt});
  }
  // One setting per distinct cost: every verification runs bcrypt once at
  // each of them (see Verify), whoever the user.
  for (const auto& [user, hash] : users) auth->cost_settings_.try_emplace(BcryptCost(hash), hash);
  if (RAND_bytes(auth->hmac_key_.data(), static_cast<int>(auth->hmac_key_.size())) != 1) {
    return MakeError(ErrorCode::kIo, "basic auth: no random bytes for the credential cache key");
  }
  return auth;
}

BasicAuthenticator::Digest BasicAuthenticator::CredentialDigest(std::string_view user,
                                                                std::string_view password) const {
  Digest digest{};
  unsigned int length = 0;
  // user, NUL, password: the NUL keeps ("ab", "c") apart from ("a", "bc").
  std::string message;
  message.reserve(user.size() + 1 + password.size());
  message.append(user).push_back('\0');
  message.append(password);
  HMAC(EVP_sha256(), hmac_key_.data(), static_cast<int>(hmac_key_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest.data(),
       &length);
  OPENSSL_cleanse(message.data(), message.size());
  return digest;
}

bool BasicAuthenticator::IsCached(std::string_view user, std::string_view password) const {
  const Digest digest = CredentialDigest(user, password);
  std::lock_guard lock(mutex_);
  const auto it = users_.find(user);
  if (it == users_.end() || !it->second.verified) return false;
  return CRYPTO_memcmp(it->second.verified->data(), digest.data(), digest.size()) == 0;
}

bool BasicAuthenticator::Verify(std::string_view user, std::string_view password) {
  std::string hash;
  {
    std::lock_guard lock(mutex_);
    const auto it = users_.find(user);
    hash = it == users_.end() ? std::string() : it->second.hash;
  }
  // The same work for every user, known or not: one bcrypt at each
  // configured cost, the user's own hash at its cost. Checking an unknown
  // name against the costliest hash alone still let a name behind a cheaper
  // hash answer faster (cost 4: 1.4 ms against 64 ms at cost 10).
  const bool known = !hash.empty();
  std::optional<std::string> computed;
  for (const auto& [cost, setting] : cost_settings_) {
    if (known && cost == BcryptCost(hash)) {
      computed = Crypt(password, hash);
    } else {
      (void)Crypt(password, setting);
    }
  }
  if (!known || !computed || !ConstantTimeEquals(*computed, hash)) return false;
  const Digest digest = CredentialDigest(user, password);
  std::lock_guard lock(mutex_);
  users_.find(user)->second.verified = digest;
  return true;
}

}  // namespace iowatch::daemon::http
