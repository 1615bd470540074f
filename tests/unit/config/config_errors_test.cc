// Every class of configuration error, with its exact message and position.
#include <gtest/gtest.h>

#include "common/file_tree.h"
#include "config/config.h"
#include "config/values.h"
#include "tests/unit/config/config_test_util.h"

namespace iowatch::config {
namespace {

constexpr char kHash[] = "$2b$10$tdYaENOqHspa4/nfnRHKSOxUx1G1Odb8ISB2dU8LqnRx3uVH7tt4y";
constexpr char kWebKeys[] =
    "listen_address, read_timeout, write_timeout, idle_timeout, max_connections, "
    "max_header_bytes, tls, basic_auth_users";

using testing::ErrorOf;
using testing::MessageOf;

TEST(ConfigErrors, UnknownKeysAtEveryLevel) {
  EXPECT_EQ(MessageOf("webb:\n  x: 1\n"),
            "t.yaml:1:1: webb: unknown key; expected one of web, sampling, devices, cgroups, "
            "passive, collectors, paths, "
            "state_dir, log, probes");
  EXPECT_EQ(MessageOf("web:\n  listen_adress: \":9860\"\n"),
            std::string("t.yaml:2:3: web.listen_adress: unknown key; expected one of ") + kWebKeys);
  EXPECT_EQ(MessageOf("web:\n  tls:\n    cert: a\n"),
            "t.yaml:3:5: web.tls.cert: unknown key; expected one of cert_file, key_file");
  EXPECT_EQ(ErrorOf("log: {lvl: info}").code, ErrorCode::kParse);
}

TEST(ConfigErrors, DuplicateKeys) {
  EXPECT_EQ(MessageOf("log:\n  level: info\n  level: debug\n"),
            "t.yaml:3:3: log.level: duplicate key");
  EXPECT_EQ(MessageOf("log: {}\nlog: {}\n"), "t.yaml:2:1: log: duplicate key");
}

TEST(ConfigErrors, WrongShapes) {
  EXPECT_EQ(
      MessageOf("web:\n  - listen_address: x\n"),
      std::string("t.yaml:2:3: web: expected a map with keys ") + kWebKeys + ", found a list");
  EXPECT_EQ(MessageOf("sampling: 1s\n"),
            "t.yaml:1:11: sampling: expected a map with keys interval, window, found \"1s\"");
  EXPECT_EQ(
      MessageOf("- web\n"),
      "t.yaml:1:1: expected a map with keys web, sampling, devices, cgroups, passive, collectors, "
      "paths, "
      "state_dir, log, "
      "probes, found a list");
  EXPECT_EQ(MessageOf("? [a]\n: 1\n"), "t.yaml:1:3: expected a key name, found a list");
  EXPECT_EQ(MessageOf("state_dir: [a]\n"),
            "t.yaml:1:12: state_dir: expected a non-empty path, found a list");
  EXPECT_EQ(MessageOf("devices: {include: {a: 1}}"),
            "t.yaml:1:20: devices.include: expected a string, found a map");
}

TEST(ConfigErrors, MissingValuePointsAtTheKey) {
  EXPECT_EQ(MessageOf("web:\n  read_timeout:\n  write_timeout: 1s\n"),
            "t.yaml:2:3: web.read_timeout: expected a duration like \"500ms\", \"1s\" or \"15m\", "
            "found no value");
  EXPECT_EQ(MessageOf("devices:\n  exclude: ~\n"),
            "t.yaml:2:3: devices.exclude: expected a string, found no value");
}

TEST(ConfigErrors, Integers) {
  EXPECT_EQ(MessageOf("web:\n  max_connections: abc\n"),
            "t.yaml:2:20: web.max_connections: expected an integer from 1 to 65535, found \"abc\"");
  EXPECT_EQ(MessageOf("web: {max_connections: -1}"),
            "t.yaml:1:24: web.max_connections: expected an integer from 1 to 65535, found \"-1\"");
  EXPECT_EQ(MessageOf("web: {max_connections: 0}"),
            "t.yaml:1:24: web.max_connections: expected an integer from 1 to 65535, found \"0\"");
  EXPECT_EQ(ErrorOf("web: {max_connections: 0}").code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf("web: {max_connections: 65536}").code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf("web: {max_connections: 99999999999999999999999}").code,
            ErrorCode::kInvalidArgument);
  for (const char* bad : {"1.5", "0x40", "+64", "64k", "1e3", "{a: 1}", "[64]"}) {
    EXPECT_EQ(ErrorOf(std::string("web: {max_connections: ") + bad + "}").code, ErrorCode::kParse)
        << bad;
  }
}

TEST(ConfigErrors, Sizes) {
  EXPECT_EQ(MessageOf("web: {max_header_bytes: 8x}"),
            "t.yaml:1:25: web.max_header_bytes: expected a size from 1024 to 1048576 bytes, like "
            "\"8192\" or \"8k\", found \"8x\"");
  EXPECT_EQ(MessageOf("web: {max_header_bytes: 512}"),
            "t.yaml:1:25: web.max_header_bytes: expected a size from 1024 to 1048576 bytes, like "
            "\"8192\" or \"8k\", found \"512\"");
  EXPECT_EQ(ErrorOf("web: {max_header_bytes: 2M}").code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf("web: {max_header_bytes: 99999999999P}").code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf("web: {max_header_bytes: -8k}").code, ErrorCode::kParse);
}

TEST(ConfigErrors, Durations) {
  EXPECT_EQ(
      MessageOf("sampling:\n  interval: fast\n"),
      "t.yaml:2:13: sampling.interval: expected a duration like \"500ms\", \"1s\" or \"15m\", "
      "found \"fast\"");
  EXPECT_EQ(MessageOf("web: {read_timeout: 10}"),
            "t.yaml:1:21: web.read_timeout: expected a duration like \"500ms\", \"1s\" or \"15m\", "
            "found \"10\"");
  EXPECT_EQ(
      MessageOf("sampling: {interval: 50ms}"),
      "t.yaml:1:22: sampling.interval: expected a duration of at least 100ms, found \"50ms\"");
  EXPECT_EQ(MessageOf("web: {write_timeout: 0}"),
            "t.yaml:1:22: web.write_timeout: expected a duration of at least 1ms, found \"0\"");
  EXPECT_EQ(MessageOf("web: {idle_timeout: 99999999999999999999w}"),
            "t.yaml:1:21: web.idle_timeout: duration \"99999999999999999999w\" is out of range "
            "(at most 2^63-1 ms)");
  EXPECT_EQ(ErrorOf("web: {idle_timeout: -1s}").code, ErrorCode::kParse);
}

// Adversarial test: 8000w passed check-config and overflowed the
// sampler's and the server's nanosecond arithmetic (a spinning sampler, empty
// replies). Every duration has an upper bound, named in the error.
TEST(ConfigErrors, DurationsHaveAnUpperBound) {
  EXPECT_EQ(MessageOf("sampling: {interval: 8000w, window: 8000w}"),
            "t.yaml:1:22: sampling.interval: expected a duration of at most 52w, found \"8000w\"");
  EXPECT_EQ(MessageOf("probes: {busy_window: 40000w}"),
            "t.yaml:1:23: probes.busy_window: expected a duration of at most 52w, found "
            "\"40000w\"");
  EXPECT_EQ(MessageOf("web: {read_timeout: 20000w}"),
            "t.yaml:1:21: web.read_timeout: expected a duration of at most 52w, found \"20000w\"");
  EXPECT_EQ(testing::Parsed("web: {read_timeout: 52w}").web.read_timeout, std::chrono::weeks(52));
  EXPECT_EQ(testing::Parsed("probes: {retention: 520w}").probes.retention, std::chrono::weeks(520));
  EXPECT_EQ(MessageOf("probes: {retention: 521w}"),
            "t.yaml:1:21: probes.retention: expected a duration of at most 520w, found \"521w\"");
}

TEST(ConfigErrors, WindowShorterThanInterval) {
  EXPECT_EQ(MessageOf("sampling:\n  interval: 10s\n  window: 5s\n"),
            "t.yaml:3:11: sampling.window: expected at least sampling.interval (10s), found 5s");
  EXPECT_EQ(MessageOf("sampling: {interval: 2m}"),
            "t.yaml:1:22: sampling.interval: expected at most sampling.window (1m), found 2m");
  EXPECT_EQ(ErrorOf("sampling: {window: 500ms}").code, ErrorCode::kInvalidArgument);
}

TEST(ConfigErrors, Booleans) {
  EXPECT_EQ(MessageOf("devices: {partitions: yes}"),
            "t.yaml:1:23: devices.partitions: expected true or false, found \"yes\"");
  for (const char* bad : {"1", "on", "y", "tRUE", "\"\"", "[true]"}) {
    EXPECT_EQ(ErrorOf(std::string("devices: {partitions: ") + bad + "}").code, ErrorCode::kParse)
        << bad;
  }
}

TEST(ConfigErrors, InvalidRegularExpressions) {
  const std::string include = MessageOf("devices:\n  include: \"(sd\"\n");
  const std::string prefix =
      "t.yaml:2:12: devices.include: expected a regular expression (RE2 syntax), found \"(sd\" (";
  EXPECT_EQ(include.substr(0, prefix.size()), prefix) << include;
  EXPECT_GT(include.size(), prefix.size() + 2) << "the regex library's reason is missing";
  EXPECT_EQ(MessageOf("devices: {exclude: '[a-'}").substr(0, 35),
            "t.yaml:1:20: devices.exclude: expec");
  EXPECT_EQ(ErrorOf("devices: {exclude: '*'}").code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(MessageOf("devices: {exclude: '^(?!sd)'}"),
            "t.yaml:1:20: devices.exclude: expected a regular expression (RE2 syntax), found "
            "\"^(?!sd)\" (invalid perl operator: (?!)");
}

// Adversarial test: std::regex's recursive compiler crashed on
// ~50,000 nested groups (check-config SIGSEGV, the daemon killed by SIGHUP).
TEST(ConfigErrors, HugeAndDeeplyNestedPatternsAreRefusedNotCrashedOn) {
  const std::string nested = std::string(50'000, '(') + "a" + std::string(50'000, ')');
  const std::string message = MessageOf("devices:\n  include: \"" + nested + "\"\n");
  EXPECT_TRUE(
      message.starts_with("t.yaml:2:12: devices.include: expected a regular expression of "
                          "at most 4096 bytes, found \"(((("))
      << message.substr(0, 200);
  EXPECT_NE(message.find("... (100001 bytes)"), std::string::npos) << message.substr(0, 300);
  // Nested as deep as the size limit allows: compiled without recursion.
  const std::string deep = std::string(2'000, '(') + "a" + std::string(2'000, ')');
  EXPECT_EQ(testing::Parsed("devices:\n  include: \"" + deep + "\"\n").devices.include, deep);
}

TEST(ConfigErrors, TlsNeedsBothFiles) {
  EXPECT_EQ(MessageOf("web:\n  tls:\n    cert_file: /a.pem\n"),
            "t.yaml:3:5: web.tls: expected both cert_file and key_file, found only cert_file");
  EXPECT_EQ(MessageOf("web: {tls: {key_file: k.pem}}"),
            "t.yaml:1:12: web.tls: expected both cert_file and key_file, found only key_file");
  EXPECT_EQ(ErrorOf("web: {tls: {cert_file: c.pem, key_file: \"\"}}").code,
            ErrorCode::kInvalidArgument);
}

// A NUL byte cut the path, and the error named "/etc/ssl".
TEST(ConfigErrors, TlsPathsHoldNoNulByte) {
  EXPECT_EQ(MessageOf("web: {tls: {cert_file: \"/etc/ssl\\0x\", key_file: k.pem}}"),
            "t.yaml:1:24: web.tls.cert_file: expected a path without NUL bytes, found "
            "\"/etc/ssl\\x00x\"");
  EXPECT_EQ(MessageOf("web: {tls: {cert_file: c.pem, key_file: \"/etc/ssl\\0x\"}}"),
            "t.yaml:1:41: web.tls.key_file: expected a path without NUL bytes, found "
            "\"/etc/ssl\\x00x\"");
  EXPECT_EQ(testing::Parsed("web: {tls: {cert_file: \"\", key_file: \"\"}}").web.tls_cert_file, "");
}

TEST(ConfigErrors, BasicAuthUsers) {
  const std::string plain = MessageOf("web:\n  basic_auth_users:\n    alice: hunter2\n");
  EXPECT_EQ(plain,
            "t.yaml:3:12: web.basic_auth_users.alice: expected a bcrypt hash (\"$2y$\", a cost "
            "from 04 to 31, \"$\" and 53 characters, as \"htpasswd -nbBC 10 user password\" "
            "prints), found something else (not shown: it may be a password)");
  EXPECT_EQ(plain.find("hunter2"), std::string::npos);
  EXPECT_EQ(MessageOf(std::string("web: {basic_auth_users: {\"a:b\": \"") + kHash + "\"}}"),
            "t.yaml:1:26: web.basic_auth_users: expected a user name without ':', found \"a:b\"");
  EXPECT_EQ(MessageOf(std::string("web:\n  basic_auth_users:\n    u: ") + kHash +
                      "\n    u: " + kHash + "\n"),
            "t.yaml:4:5: web.basic_auth_users.u: duplicate user");
  EXPECT_EQ(MessageOf("web: {basic_auth_users: [alice]}"),
            "t.yaml:1:25: web.basic_auth_users: expected a map of user names to bcrypt hashes, "
            "found a list");
  EXPECT_EQ(MessageOf("web: {basic_auth_users: {alice: }}"),
            "t.yaml:1:26: web.basic_auth_users.alice: expected a bcrypt hash, found no value");
}

// A NUL byte in a user name passed check-config: the name could never come
// in a header. No string key takes one (they end up in headers, paths,
// labels and C strings); each is named at its line and column.
TEST(ConfigErrors, NoStringKeyTakesANulByte) {
  EXPECT_EQ(MessageOf(std::string("web: {basic_auth_users: {\"al\\0ice\": \"") + kHash + "\"}}"),
            "t.yaml:1:26: web.basic_auth_users: expected a user name without NUL bytes, found "
            "\"al\\x00ice\"");
  EXPECT_EQ(MessageOf(std::string("web:\n  basic_auth_users:\n    \"al\\tice\": ") + kHash + "\n"),
            "t.yaml:3:5: web.basic_auth_users: expected a user name without control characters, "
            "found \"al\\tice\"");
  EXPECT_EQ(MessageOf("web: {listen_address: \"127.0.0.1:9\\0\"}"),
            "t.yaml:1:23: web.listen_address: expected \"host:port\" without NUL bytes, found "
            "\"127.0.0.1:9\\x00\"");
  EXPECT_EQ(MessageOf("devices: {include: \"sd\\0\"}"),
            "t.yaml:1:20: devices.include: expected a string without NUL bytes, found "
            "\"sd\\x00\"");
  EXPECT_EQ(MessageOf("state_dir: \"/var/lib/x\\0y\""),
            "t.yaml:1:12: state_dir: expected a non-empty path without NUL bytes, found "
            "\"/var/lib/x\\x00y\"");
  EXPECT_EQ(MessageOf("probes: {jobs: [{name: a, job_file: j.fio, job_section: \"s\\0\"}]}"),
            "t.yaml:1:57: probes.jobs[0].job_section: expected a job name without NUL bytes, "
            "found \"s\\x00\"");
}

TEST(ParseBcryptHash, FormOfHtpasswdAndPrometheusHashes) {
  const std::string good = kHash;
  EXPECT_TRUE(ParseBcryptHash(good).has_value());
  EXPECT_TRUE(ParseBcryptHash("$2a$" + good.substr(4)).has_value());
  EXPECT_TRUE(ParseBcryptHash("$2y$04$" + good.substr(7)).has_value());
  EXPECT_TRUE(ParseBcryptHash("$2y$31$" + good.substr(7)).has_value());
  for (const std::string& bad :
       {std::string(), "$2x$" + good.substr(4), "$1$" + good.substr(3), "$2y$03$" + good.substr(7),
        "$2y$32$" + good.substr(7), "$2y$1$" + good.substr(6), "$2y$10x" + good.substr(7),
        good.substr(0, 59), good + "x", good.substr(0, 59) + "!", "$2y$1a$" + good.substr(7)}) {
    const auto s = ParseBcryptHash(bad);
    EXPECT_FALSE(s.has_value()) << bad;
    if (!s) {
      EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
    }
  }
}

TEST(ConfigErrors, ListenAddress) {
  EXPECT_EQ(
      MessageOf("web: {listen_address: localhost}"),
      "t.yaml:1:23: web.listen_address: expected \"host:port\", \"[ipv6]:port\" or \":port\", "
      "found \"localhost\"");
  EXPECT_EQ(MessageOf("web: {listen_address: \":0\"}"),
            "t.yaml:1:23: web.listen_address: expected a port from 1 to 65535, found \":0\"");
  EXPECT_EQ(ErrorOf("web: {listen_address: \":70000\"}").code, ErrorCode::kInvalidArgument);
}

TEST(ConfigErrors, LogLevelAndPaths) {
  EXPECT_EQ(MessageOf("log:\n  level: verbose\n"),
            "t.yaml:2:10: log.level: expected one of trace, debug, info, warn, error, off, found "
            "\"verbose\"");
  EXPECT_EQ(ErrorOf("log: {level: INFO}").code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(MessageOf("paths: {procfs: \"\"}"),
            "t.yaml:1:17: paths.procfs: expected a non-empty path, found \"\"");
}

TEST(ConfigErrors, InvalidYamlHasYamlCppsPosition) {
  const Error tab = ErrorOf("web:\n  tls: {}\n\tlog: {}\n");
  EXPECT_EQ(tab.code, ErrorCode::kParse);
  EXPECT_EQ(tab.ToString(), "t.yaml:3:2: invalid YAML: end of map not found");
  EXPECT_EQ(MessageOf("web: {listen_address: \":1\"\n"),
            "t.yaml:2:1: invalid YAML: end of map flow not found");
  EXPECT_EQ(MessageOf("log: {level: info}\n---\nlog: {level: debug}\n"),
            "t.yaml:3:1: expected one YAML document, found more");
  EXPECT_EQ(MessageOf("---\n---\n"), "t.yaml:2:1: expected one YAML document, found more");
  EXPECT_TRUE(ParseConfig("# only a comment\n", "t.yaml").has_value());
}

// yaml-cpp 0.7's LoadAll never returned on these (and grew by gigabytes).
TEST(ConfigErrors, AFlowEntryOutsideAFlowIsRefusedNotLoopedOn) {
  EXPECT_EQ(MessageOf(","), "t.yaml:1:1: invalid YAML: ',' outside a flow list or map");
  EXPECT_EQ(MessageOf(",a: 1\nlog: {}\n"),
            "t.yaml:1:1: invalid YAML: ',' outside a flow list or map");
  const auto found = ReadFile(iowatch::testing::SourceDir() +
                              "/tests/fuzz/seeds/fuzz_config/config-timeout-commas.yaml");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(MessageOf(*found), "t.yaml:1:1: invalid YAML: ',' outside a flow list or map");
}

}  // namespace
}  // namespace iowatch::config
