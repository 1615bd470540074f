// Basic auth: header parsing, bcrypt verification and its cache, and the
// server's 401 answers. Hashes use bcrypt cost 4 so that tests stay fast.
#include "daemon/http/basic_auth.h"

#include <crypt.h>
#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "daemon/http/server.h"
#include "daemon/http/server_state.h"
#include "tests/unit/daemon/http/server_harness.h"
#include "tests/unit/daemon/http/test_client.h"

namespace iowatch::daemon::http {
namespace {

// Independent of BcryptHash: libxcrypt directly, as htpasswd would.
std::string HashCost4(const std::string& password) {
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_NE(crypt_gensalt_rn("$2b$", 4, nullptr, 0, setting, sizeof setting), nullptr);
  crypt_data data{};
  const char* hash = crypt_r(password.c_str(), setting, &data);
  EXPECT_NE(hash, nullptr);
  EXPECT_TRUE(std::string_view(hash).starts_with("$2b$04$"));
  return hash;
}

std::string BasicHeader(std::string_view user_colon_password) {
  // Base64 by hand (RFC 4648) to keep the test independent of the decoder.
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out = "Basic ";
  size_t i = 0;
  for (; i + 2 < user_colon_password.size(); i += 3) {
    const unsigned v = static_cast<unsigned char>(user_colon_password[i]) << 16 |
                       static_cast<unsigned char>(user_colon_password[i + 1]) << 8 |
                       static_cast<unsigned char>(user_colon_password[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(v >> shift) & 63];
  }
  const size_t rest = user_colon_password.size() - i;
  if (rest > 0) {
    unsigned v = static_cast<unsigned char>(user_colon_password[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(user_colon_password[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

TEST(ParseBasicAuthorization, DecodesUserAndPassword) {
  auto c = ParseBasicAuthorization(BasicHeader("prometheus:s3cr:et"));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->user, "prometheus");
  EXPECT_EQ(c->password, "s3cr:et");  // only the first colon separates
  c = ParseBasicAuthorization("basic " + BasicHeader("a:").substr(6));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->user, "a");
  EXPECT_EQ(c->password, "");
  EXPECT_FALSE(ParseBasicAuthorization(""));
  EXPECT_FALSE(ParseBasicAuthorization("Bearer abc"));
  EXPECT_FALSE(ParseBasicAuthorization("Basic !!!!"));
  EXPECT_FALSE(ParseBasicAuthorization(BasicHeader("no-colon")));
}

TEST(BasicAuthenticator, VerifiesWithBcryptAndCachesOnlySuccess) {
  const auto auth = BasicAuthenticator::Create({{"prometheus", HashCost4("right")}});
  ASSERT_TRUE(auth) << auth.error().ToString();
  auto& a = **auth;
  EXPECT_FALSE(a.IsCached("prometheus", "right"));
  EXPECT_FALSE(a.Verify("prometheus", "wrong"));
  EXPECT_FALSE(a.IsCached("prometheus", "wrong"));
  EXPECT_FALSE(a.Verify("nobody", "right"));
  EXPECT_TRUE(a.Verify("prometheus", "right"));
  EXPECT_TRUE(a.IsCached("prometheus", "right"));
  EXPECT_FALSE(a.IsCached("prometheus", "righ"));
  EXPECT_FALSE(a.IsCached("prometheu", "sright"));
}

// Adversarial test: an unknown user was checked against the first user's
// hash; then against the costliest one, which still left a name behind a
// cheaper hash answering 45 times faster (cost 4: 1.4 ms against 64 ms).
// Every check now runs bcrypt once at each configured cost: the cheap user,
// the dear one and an unknown name cost the same. Timing, the fastest of 5
// each, within a factor of 2 (the work is equal).
TEST(BasicAuthenticator, EveryUserKnownOrNotCostsTheSame) {
  const auto cheap = BcryptHash("x", 4);
  const auto dear = BcryptHash("y", 10);
  ASSERT_TRUE(cheap && dear);
  const auto auth = BasicAuthenticator::Create({{"a", *cheap}, {"b", *dear}});
  ASSERT_TRUE(auth);
  // Interleaved rounds, the fastest of each user's, in this thread's CPU time
  // (bcrypt is all CPU): other work on the machine then slows no user more
  // than another.
  const auto cpu_ms = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
  };
  std::map<std::string, double> fastest;
  for (int round = 0; round < 5; ++round) {
    for (const char* user : {"nobody", "a", "b"}) {
      const double start = cpu_ms();
      EXPECT_FALSE((*auth)->Verify(user, "wrong"));
      const double ms = cpu_ms() - start;
      fastest[user] = round == 0 ? ms : std::min(fastest[user], ms);
    }
  }
  const double unknown = fastest["nobody"];
  const double cost4 = fastest["a"];
  const double cost10 = fastest["b"];
  std::cout << "fastest of 5 (CPU ms): unknown " << unknown << ", cost-4 user " << cost4
            << ", cost-10 user " << cost10 << "\n";
  for (const double known : {cost4, cost10}) {
    EXPECT_LT(unknown, 2 * known) << unknown << " ms against " << known << " ms";
    EXPECT_LT(known, 2 * unknown) << known << " ms against " << unknown << " ms";
  }
  EXPECT_TRUE((*auth)->Verify("a", "x"));
  EXPECT_TRUE((*auth)->Verify("b", "y"));
}

TEST(BasicAuthWarnings, CheapHashesAndMixedCostsAreNamed) {
  const auto cheap = BcryptHash("x", 4);
  const auto dear = BcryptHash("y", 10);
  ASSERT_TRUE(cheap && dear);
  EXPECT_TRUE(BasicAuthWarnings({{"b", *dear}}).empty());
  const auto warnings = BasicAuthWarnings({{"a", *cheap}, {"b", *dear}});
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("user \"a\": bcrypt cost 4 is cheap"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("2 different bcrypt costs (4, 10)"), std::string::npos) << warnings[1];
}

TEST(BasicAuthenticator, BcryptHashMakesVerifiableHashes) {
  const auto hash = BcryptHash("pw", 4);
  ASSERT_TRUE(hash) << hash.error().ToString();
  EXPECT_TRUE(hash->starts_with("$2b$04$"));
  const auto auth = BasicAuthenticator::Create({{"u", *hash}});
  ASSERT_TRUE(auth);
  EXPECT_TRUE((*auth)->Verify("u", "pw"));
  EXPECT_FALSE(BcryptHash("pw", 3));
}

TEST(BasicAuthenticator, RejectsConfigurationErrorsNamingTheUser) {
  auto auth = BasicAuthenticator::Create({{"alice", "$1$md5$notbcrypt"}});
  ASSERT_FALSE(auth);
  EXPECT_NE(auth.error().ToString().find("alice"), std::string::npos);
  auth = BasicAuthenticator::Create({{"a:b", HashCost4("x")}});
  ASSERT_FALSE(auth);
  EXPECT_NE(auth.error().ToString().find("a:b"), std::string::npos);
  EXPECT_FALSE(BasicAuthenticator::Create({}));
}

TEST(VerificationQueue, BoundsEachClientAndTheWhole) {
  internal::VerificationQueue queue;
  EXPECT_TRUE(queue.TryStart("192.0.2.1"));
  EXPECT_FALSE(queue.TryStart("192.0.2.1"));  // one per client
  for (uint32_t i = 1; i < internal::VerificationQueue::kTotal; ++i) {
    EXPECT_TRUE(queue.TryStart("198.51.100." + std::to_string(i)));
  }
  EXPECT_FALSE(queue.TryStart("203.0.113.1"));  // the whole queue is full
  EXPECT_EQ(queue.Pending(), internal::VerificationQueue::kTotal);
  queue.Finish("192.0.2.1");
  EXPECT_TRUE(queue.TryStart("203.0.113.1"));
  EXPECT_FALSE(queue.TryStart("192.0.2.1"));  // full again
  queue.Finish("unknown");                    // not pending: no effect
  EXPECT_EQ(queue.Pending(), internal::VerificationQueue::kTotal);
}

// Adversarial test: wrong passwords from one client queued without
// bound in front of everyone's bcrypt. A second check from a client whose
// first is still running is answered 429 at once.
TEST(ServerBasicAuth, AClientCannotQueueASecondPasswordCheck) {
  const auto slow = BcryptHash("right", 12);  // ~0.2-0.4 s: the first is still running
  ASSERT_TRUE(slow);
  testing::ServerHarness harness;
  const auto server = harness.Start(ServerOptions{.basic_auth_users = {{"prometheus", *slow}}},
                                    [](const Request&) { return Response{.body = "ok\n"}; });
  ASSERT_TRUE(server) << server.error().ToString();
  testing::TestClient first;
  testing::TestClient second;
  ASSERT_FALSE(first.Connect((*server)->local_port()));
  ASSERT_FALSE(second.Connect((*server)->local_port()));
  const testing::Headers wrong = {{"Authorization", BasicHeader("prometheus:wrong")}};
  ASSERT_FALSE(first.Send("GET", "/metrics", wrong));
  ASSERT_FALSE(second.Send("GET", "/metrics", wrong));
  const auto a = first.Read();
  const auto b = second.Read();
  ASSERT_FALSE(a.ec || b.ec);
  const std::multiset<unsigned> codes{a.response.result_int(), b.response.result_int()};
  EXPECT_EQ(codes, (std::multiset<unsigned>{401, 429}));
  const auto& throttled = a.response.result_int() == 429 ? a.response : b.response;
  EXPECT_EQ(throttled["Retry-After"], "1");
}

TEST(ServerBasicAuth, AnswersWith401UntilTheRightCredentials) {
  testing::ServerHarness harness;
  const auto server =
      harness.Start(ServerOptions{.basic_auth_users = {{"prometheus", HashCost4("right")}}},
                    [](const Request& r) { return Response{.body = "user=" + r.user + "\n"}; });
  ASSERT_TRUE(server) << server.error().ToString();
  testing::TestClient client;
  ASSERT_FALSE(client.Connect((*server)->local_port()));

  auto reply = client.Get("/metrics");
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(reply.response.result_int(), 401u);
  const std::string challenge = reply.response["WWW-Authenticate"];
  EXPECT_TRUE(challenge.starts_with("Basic realm="));

  reply = client.Get("/metrics", {{"Authorization", BasicHeader("prometheus:wrong")}});
  EXPECT_EQ(reply.response.result_int(), 401u);
  reply = client.Get("/metrics", {{"Authorization", BasicHeader("grafana:right")}});
  EXPECT_EQ(reply.response.result_int(), 401u);
  for (int i = 0; i < 2; ++i) {  // the second answer comes from the cache
    reply = client.Get("/metrics", {{"Authorization", BasicHeader("prometheus:right")}});
    ASSERT_FALSE(reply.ec) << reply.ec.message();
    EXPECT_EQ(reply.response.result_int(), 200u);
    EXPECT_EQ(reply.response.body(), "user=prometheus\n");
  }
  EXPECT_EQ((*server)->stats().auth_failures, 3u);
}

}  // namespace
}  // namespace iowatch::daemon::http
