#include "daemon/metrics/push/pushgateway.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string_view>

#include "common/utf8.h"
#include "daemon/metrics/push/curl_library.h"

namespace iowatch::daemon {
namespace {

std::unexpected<Error> Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

bool IsLabelName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// The gateway's base URL, checked: http(s)://HOST[:PORT][/PREFIX] without a
// trailing '/', a query or a fragment (the grouping path goes after it).
Result<std::string> BaseUrl(const std::string& url) {
  const auto bad = [&] {
    return Invalid(
        fmt::format("--push-gateway: expected http://HOST[:PORT][/PREFIX], found {:?}", url));
  };
  const size_t scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if ((scheme != "http" && scheme != "https") || url.find_first_of("?# ") != std::string::npos) {
    return bad();
  }
  const std::string rest = url.substr(scheme_end + 3);
  const std::string authority = rest.substr(0, rest.find('/'));
  const size_t colon = authority.rfind(':');
  const bool has_port =
      colon != std::string::npos && authority.find(']', colon) == std::string::npos;
  const std::string host = has_port ? authority.substr(0, colon) : authority;
  const std::string port = has_port ? authority.substr(colon + 1) : "80";
  if (host.empty() || port.empty() ||
      !std::ranges::all_of(port, [](char c) { return c >= '0' && c <= '9'; })) {
    return bad();
  }
  std::string base = url;
  while (base.ends_with('/')) base.pop_back();
  return base;
}

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

// RFC 3986's unreserved characters stay, every other byte is %XX.
std::string PercentEncode(std::string_view value) {
  std::string out;
  for (const char c : value) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += c;
    } else {
      out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    }
  }
  return out;
}

// RFC 4648 section 5 (URL and filename safe alphabet), with padding.
std::string Base64Url(std::string_view value) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  for (size_t i = 0; i < value.size(); i += 3) {
    uint32_t group = 0;
    const size_t n = std::min<size_t>(3, value.size() - i);
    for (size_t j = 0; j < 3; ++j) {
      group = (group << 8) | (j < n ? static_cast<unsigned char>(value[i + j]) : 0u);
    }
    for (size_t j = 0; j < 4; ++j) {
      out += j <= n ? kAlphabet[(group >> (18 - 6 * j)) & 63] : '=';
    }
  }
  return out;
}

// One "/NAME/VALUE" of the path, as the Pushgateway's own README
// (github.com/prometheus/pushgateway) asks.
std::string PathSegment(std::string_view name, std::string_view value) {
  if (value.find('/') != std::string_view::npos || value == "." || value == "..") {
    return fmt::format("/{}@base64/{}", name, Base64Url(value));
  }
  return fmt::format("/{}/{}", name, PercentEncode(value));
}

// curl's codes a push meets most, by name.
std::string CurlText(const CurlLibrary& lib, CURLcode code, const char* detail) {
  const std::string what = [&]() -> std::string {
    switch (code) {
      case CURLE_COULDNT_RESOLVE_HOST:
        return "cannot resolve the host";
      case CURLE_COULDNT_CONNECT:
        return "cannot connect";
      case CURLE_SSL_CONNECT_ERROR:
        return "TLS handshake failed";
      case CURLE_PEER_FAILED_VERIFICATION:
        return "the server's certificate is not trusted";
      default:
        return "curl error";
    }
  }();
  return fmt::format("cannot push: {} (curl {}: {})", what, static_cast<int>(code),
                     *detail != '\0' ? detail : lib.easy_strerror(code));
}

struct CurlDelete {
  const CurlLibrary* lib;
  void operator()(CURL* curl) const { lib->easy_cleanup(curl); }
  void operator()(curl_slist* list) const { lib->slist_free_all(list); }
};

// The start of the gateway's answer (it says why it refused a push).
size_t KeepAnswer(char* data, size_t size, size_t count, void* user) {
  auto& answer = *static_cast<std::string*>(user);
  answer.append(data, std::min(size * count, 300 - std::min<size_t>(300, answer.size())));
  return size * count;
}

// What a non-2xx status means to the user.
std::string StatusText(const CurlLibrary& lib, long status, CURL* curl, std::string_view answer) {
  if (status >= 300 && status < 400) {
    char* location = nullptr;
    lib.easy_getinfo(curl, CURLINFO_REDIRECT_URL, &location);
    return fmt::format(
        "cannot push: the gateway answered HTTP {}, a redirect to {:?} (not followed: nothing "
        "was pushed; give --push-gateway the gateway's own URL)",
        status, std::string_view(location != nullptr ? location : ""));
  }
  std::string first_line(answer.substr(0, answer.find('\n')));
  return first_line.empty() ? fmt::format("cannot push: the gateway answered HTTP {}", status)
                            : fmt::format("cannot push: the gateway answered HTTP {}: {}", status,
                                          ToValidUtf8(first_line));
}

}  // namespace

Result<PushTarget> MakePushTarget(const std::string& url, const std::string& job,
                                  const std::vector<std::string>& labels) {
  if (auto base = BaseUrl(url); !base) return ErrorOf(base);
  if (job.empty() || !IsValidUtf8(job)) {
    return Invalid(fmt::format("--push-job: expected a name in UTF-8, found {:?}", job));
  }
  PushTarget target{url, job, {}};
  for (const std::string& label : labels) {
    const size_t eq = label.find('=');
    const std::string name = label.substr(0, eq);
    if (eq == std::string::npos || !IsLabelName(name) || name == "job" || label.size() == eq + 1 ||
        !IsValidUtf8(std::string_view(label).substr(eq + 1))) {
      return Invalid(fmt::format(
          "--push-label: expected NAME=VALUE (a label name other than job, a value in UTF-8, "
          "not empty), found {:?}",
          label));
    }
    target.labels.emplace_back(name, label.substr(eq + 1));
  }
  if (std::ranges::none_of(target.labels, [](const auto& l) { return l.first == "instance"; })) {
    target.labels.emplace_back("instance", ToValidUtf8(Hostname()));
  }
  return target;
}

std::string GroupingPath(const PushTarget& target) {
  std::string path = "/metrics" + PathSegment("job", target.job);
  for (const auto& [name, value] : target.labels) path += PathSegment(name, value);
  return path;
}

Status PushExposition(const PushTarget& target, std::string_view exposition,
                      std::chrono::seconds timeout) {
  auto base = BaseUrl(target.url);
  if (!base) return ErrorOf(base);
  if (!IsValidUtf8(exposition)) {
    return MakeError(ErrorCode::kInvalidArgument, "cannot push: the exposition is not valid UTF-8",
                     target.url);
  }
  auto loaded = LoadCurl();
  if (!loaded) return MakeError(loaded.error().code, loaded.error().message, target.url);
  const CurlLibrary& lib = **loaded;
  std::unique_ptr<CURL, CurlDelete> curl(lib.easy_init(), CurlDelete{&lib});
  if (!curl) return MakeError(ErrorCode::kIo, "cannot push: curl setup failed", target.url);
  const std::string url = *base + GroupingPath(target);
  std::unique_ptr<curl_slist, CurlDelete> headers(
      lib.slist_append(nullptr, "Content-Type: text/plain; version=0.0.4; charset=utf-8"),
      CurlDelete{&lib});
  headers.reset(lib.slist_append(headers.release(), "Expect:"));
  const long timeout_ms = std::chrono::milliseconds(timeout).count();
  char detail[CURL_ERROR_SIZE] = {};
  std::string answer;
  CURL* c = curl.get();
  lib.easy_setopt(c, CURLOPT_URL, url.c_str());
  lib.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  lib.easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
  const std::string body(exposition);  // curl reads it during the transfer, as a C string
  lib.easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
  lib.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  lib.easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  lib.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  lib.easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  lib.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  lib.easy_setopt(c, CURLOPT_ERRORBUFFER, detail);
  lib.easy_setopt(c, CURLOPT_WRITEFUNCTION, KeepAnswer);
  lib.easy_setopt(c, CURLOPT_WRITEDATA, &answer);
  const CURLcode done = lib.easy_perform(c);
  if (done == CURLE_OPERATION_TIMEDOUT) {
    return MakeError(ErrorCode::kIo,
                     fmt::format("cannot push: no answer within {} s", timeout.count()),
                     target.url);
  }
  if (done != CURLE_OK) return MakeError(ErrorCode::kIo, CurlText(lib, done, detail), target.url);
  long status = 0;
  lib.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 200 && status < 300) return {};
  return MakeError(ErrorCode::kIo, StatusText(lib, status, c, answer), target.url);
}

}  // namespace iowatch::daemon
