#include "daemon/metrics/push/pushgateway.h"

#include <fmt/format.h>
#include <prometheus/collectable.h>
#include <prometheus/gateway.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "daemon/metrics/push/exposition_families.h"

namespace iowatch::daemon {
namespace {

// The families to push, as prometheus-cpp's Gateway collects them.
class FixedFamilies : public prometheus::Collectable {
 public:
  explicit FixedFamilies(std::vector<prometheus::MetricFamily> families)
      : families_(std::move(families)) {}
  std::vector<prometheus::MetricFamily> Collect() const override { return families_; }

 private:
  std::vector<prometheus::MetricFamily> families_;
};

std::unexpected<Error> Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

bool IsLabelName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// What the URL means to prometheus-cpp's Gateway, which joins host ':' port:
// "http://host" and "9091" (a path prefix rides on the port).
struct HostPort {
  std::string host;
  std::string port;
};

Result<HostPort> SplitUrl(const std::string& url) {
  const size_t scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") {
    return Invalid(
        fmt::format("--push-gateway: expected http://HOST[:PORT][/PREFIX], found {:?}", url));
  }
  const std::string rest = url.substr(scheme_end + 3);
  const size_t path = rest.find('/');
  const std::string authority = rest.substr(0, path);
  std::string prefix = path == std::string::npos ? "" : rest.substr(path);
  while (prefix.ends_with('/')) prefix.pop_back();
  const size_t colon = authority.rfind(':');
  const bool has_port =
      colon != std::string::npos && authority.find(']', colon) == std::string::npos;
  const std::string host = has_port ? authority.substr(0, colon) : authority;
  const std::string port =
      has_port ? authority.substr(colon + 1) : (scheme == "https" ? "443" : "80");
  if (host.empty() || port.empty() ||
      !std::ranges::all_of(port, [](char c) { return c >= '0' && c <= '9'; })) {
    return Invalid(
        fmt::format("--push-gateway: expected http://HOST[:PORT][/PREFIX], found {:?}", url));
  }
  return HostPort{scheme + "://" + host, port + prefix};
}

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

// curl's codes a push meets most, by name (prometheus-cpp returns -code).
std::string CurlText(int code) {
  switch (code) {
    case 6:
      return "cannot resolve the host (curl 6)";
    case 7:
      return "cannot connect (curl 7)";
    case 28:
      return "timed out (curl 28)";
    case 35:
      return "TLS handshake failed (curl 35)";
    case 60:
      return "the server's certificate is not trusted (curl 60)";
    default:
      return fmt::format("curl error {}", code);
  }
}

// The push, on a thread of its own: prometheus-cpp sets no timeout on curl,
// and a gateway that never answers must not hang the command. The state is
// shared with the thread, which outlives a timed-out wait (until exit).
struct PushCall {
  std::unique_ptr<prometheus::Gateway> gateway;
  std::shared_ptr<FixedFamilies> families;
  std::promise<int> status;
};

Result<int> PushWithin(const std::shared_ptr<PushCall>& call, std::chrono::seconds timeout) {
  std::future<int> status = call->status.get_future();
  std::thread([call] {
    int code = 0;
    try {
      code = call->gateway->Push();
    } catch (const std::exception&) {
      code = -1000;  // prometheus-cpp's curl setup failed
    }
    call->status.set_value(code);
  }).detach();
  if (status.wait_for(timeout) != std::future_status::ready) {
    return MakeError(ErrorCode::kIo,
                     fmt::format("cannot push: no answer within {} s", timeout.count()));
  }
  return status.get();
}

}  // namespace

Result<PushTarget> MakePushTarget(const std::string& url, const std::string& job,
                                  const std::vector<std::string>& labels) {
  if (auto split = SplitUrl(url); !split) return std::unexpected(split.error());
  if (job.empty() || job.find('/') != std::string::npos) {
    return Invalid(fmt::format("--push-job: expected a name without '/', found {:?}", job));
  }
  PushTarget target{url, job, {}};
  for (const std::string& label : labels) {
    const size_t eq = label.find('=');
    const std::string name = label.substr(0, eq);
    if (eq == std::string::npos || !IsLabelName(name) || name == "job" || label.size() == eq + 1 ||
        label.find('/', eq) != std::string::npos) {
      return Invalid(fmt::format(
          "--push-label: expected NAME=VALUE (a label name other than job, a value without "
          "'/'), found {:?}",
          label));
    }
    target.labels.emplace_back(name, label.substr(eq + 1));
  }
  if (std::ranges::none_of(target.labels, [](const auto& l) { return l.first == "instance"; })) {
    target.labels.emplace_back("instance", Hostname());
  }
  return target;
}

Status PushExposition(const PushTarget& target, std::string_view exposition,
                      std::chrono::seconds timeout) {
  auto families = ParseExposition(exposition);
  if (!families) return std::unexpected(families.error());
  auto split = SplitUrl(target.url);
  if (!split) return std::unexpected(split.error());
  prometheus::Labels grouping;
  for (const auto& [name, value] : target.labels) grouping[name] = value;
  auto call = std::make_shared<PushCall>();
  try {
    call->gateway =
        std::make_unique<prometheus::Gateway>(split->host, split->port, target.job, grouping);
  } catch (const std::exception& e) {  // prometheus-cpp's curl setup throws
    return MakeError(ErrorCode::kIo, fmt::format("cannot push: {}", e.what()), target.url);
  }
  call->families = std::make_shared<FixedFamilies>(std::move(*families));
  call->gateway->RegisterCollectable(call->families);
  auto status = PushWithin(call, timeout);
  if (!status) {
    Error e = status.error();
    e.path = target.url;
    return std::unexpected(e);
  }
  if (*status >= 200 && *status < 300) return {};
  return MakeError(ErrorCode::kIo,
                   *status < 0
                       ? fmt::format("cannot push: {}",
                                     *status == -1000 ? "curl setup failed" : CurlText(-*status))
                       : fmt::format("cannot push: the gateway answered HTTP {}", *status),
                   target.url);
}

}  // namespace iowatch::daemon
