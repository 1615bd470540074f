#include "daemon/serve/app.h"

#include <malloc.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>

#include "collectors/bpf/block_io_program.h"
#include "collectors/disk/device_filter.h"
#include "collectors/filesystem/filesystem_mounts.h"
#include "collectors/smart/smartctl_run.h"
#include "common/clock.h"
#include "common/host_units.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "daemon/http/basic_auth.h"
#include "daemon/http/server.h"
#include "daemon/http/tls_context.h"
#include "daemon/metrics/metrics_renderer.h"
#include "daemon/metrics/passive_metrics_renderer.h"
#include "daemon/metrics/probe_metrics_renderer.h"
#include "daemon/metrics/self_metrics.h"
#include "daemon/sampling/collector_log.h"
#include "daemon/scheduling/probe_service.h"
#include "daemon/serve/systemd_notify.h"
#include "daemon/sources/registry.h"
#include "daemon/sources/sampler.h"
#include "daemon/status/status_page.h"

namespace iowatch::daemon {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr milliseconds kShutdownGrace{1500};  // in-flight responses may finish; exit < 2 s

// /metrics pieces stop short of the server's piece buffer, so that the item
// crossing the mark (a few hundred bytes at most) never makes it reallocate.
constexpr size_t kMetricsPieceBytes = http::kStreamPieceBytes - 4096;

Result<SamplerOptions> SamplerOptionsFrom(const config::Config& c) {
  auto filter = collectors::DeviceFilter::Create(c.devices.include, c.devices.exclude);
  if (!filter) return ErrorOf(filter);
  SamplerOptions options;
  options.interval_seconds = ToSeconds(c.sampling.interval);
  options.window_seconds = ToSeconds(c.sampling.window);
  options.filter = std::move(*filter);
  options.partitions = c.devices.partitions;
  auto cgroup_filter = collectors::DeviceFilter::Create(c.cgroups.include, c.cgroups.exclude);
  if (!cgroup_filter) return ErrorOf(cgroup_filter);
  options.cgroups = {c.cgroups.enabled, c.cgroups.depth, std::move(*cgroup_filter),
                     c.cgroups.max_series};
  options.process_interval_seconds = ToSeconds(c.cgroups.process_interval);
  options.settings = c.settings;
  options.udev_data = c.udev_data;
  options.kmsg.state_file = (std::filesystem::path(c.state_dir) / "kmsg-errors.json").string();
  // A source that has not answered by half the interval is served stale.
  options.read_deadline_seconds = options.interval_seconds / 2;
  options.page_bytes = PageBytes();
  options.user_hz = static_cast<double>(UserHz());
  return options;
}

http::ServerOptions ServerOptionsFrom(const config::WebConfig& web) {
  http::ServerOptions o;
  o.listen_address = web.listen_address;
  o.read_timeout = web.read_timeout;
  o.write_timeout = web.write_timeout;
  o.idle_timeout = web.idle_timeout;
  o.max_connections = web.max_connections;
  o.max_header_bytes = web.max_header_bytes;
  o.tls_cert_file = web.tls_cert_file;
  o.tls_key_file = web.tls_key_file;
  o.basic_auth_users = web.basic_auth_users;
  return o;
}

// Any web.* setting: the server is configured once, at start.
bool WebChanged(const config::WebConfig& a, const config::WebConfig& b) {
  return a.listen_address != b.listen_address || a.read_timeout != b.read_timeout ||
         a.write_timeout != b.write_timeout || a.idle_timeout != b.idle_timeout ||
         a.max_connections != b.max_connections || a.max_header_bytes != b.max_header_bytes ||
         a.tls_cert_file != b.tls_cert_file || a.tls_key_file != b.tls_key_file ||
         a.basic_auth_users != b.basic_auth_users;
}

void ApplyLogLevel(const std::string& level) { spdlog::set_level(spdlog::level::from_str(level)); }

// The passive judge as configured; null when it is off. The windows are a
// minute, or the sampling interval when that is longer.
std::unique_ptr<PassiveService> MakePassiveService(
    const config::Config& c, std::function<void(const std::string& device)> on_raise) {
  const config::PassiveConfig& config = c.passive;
  if (!config.enabled) return nullptr;
  PassiveOptions options;
  options.feed.window_ms = std::max<int64_t>(60'000, c.sampling.interval.count());
  options.state_dir = c.state_dir;
  options.keep_windows_ms = config.keep_windows.count();
  options.on_raise = std::move(on_raise);
  options.feed.shadow_diskstats = config.shadow_diskstats;
  if (!config.exclude.empty()) {
    Result<NamePattern> exclude = NamePattern::Compile(config.exclude);
    if (exclude) options.exclude = std::move(*exclude);
  }
  return std::make_unique<PassiveService>(std::move(options));
}

class App {
 public:
  App(config::Config config, ServeFlags flags, SamplerOptions sampler_options)
      : config_(std::move(config)),
        flags_(std::move(flags)),
        procfs_(config_.procfs),
        sysfs_(config_.sysfs),
        sampler_(std::move(sampler_options)),
        passive_(MakePassiveService(
            config_, [this](const std::string& device) { OnPassiveRaise(device); })) {
    boost::asio::post(sampling_, [] { NameThisThread("sampler"); });
  }

  int Run() {
    SampleNow();  // READY means "serving real data", so the first sample comes first
    http::ServerOptions server_options = ServerOptionsFrom(config_.web);
    server_options.registry = &self_.registry();
    server_options.metric_routes = {"/metrics", "/", "/healthz"};
    auto server = http::Server::Start(io_, std::move(server_options),
                                      [this](const http::Request& r) { return Handle(r); });
    if (!server) {
      spdlog::critical("cannot serve HTTP: {}", server.error().ToString());
      return 2;
    }
    server_ = std::move(*server);
    for (const std::string& w : http::BasicAuthWarnings(config_.web.basic_auth_users)) {
      spdlog::warn("{}", w);
    }
    spdlog::info("iowatch listening on {}{} (config: {})", server_->tls() ? "https://" : "http://",
                 server_->local_endpoint(),
                 config_.source.empty() ? "built-in defaults" : config_.source);
    signals_.async_wait([this](auto error, int signal) { OnSignal(error, signal); });
    probes_ = ProbeService::Start(config_, io_, self_.registry());
    next_sample_ = Clock::now();
    ScheduleSample();
    StartWatchdog();
    self_.ConfigLoaded(true, WallUnixSeconds());
    systemd_.Ready();
    io_.run();
    sampling_.join();              // a sample out now ends within the sampler's read deadline
    if (probes_) probes_->Join();  // Stop() cancelled the running probe: it ends within moments
    return 0;
  }

 private:
  milliseconds Interval() const { return config_.sampling.interval; }

  // The first sample, on this thread: READY means "serving real data".
  void SampleNow() {
    auto snapshot = sampler_.Collect(procfs_, sysfs_, WallUnixSeconds());
    if (passive_) passive_->OnSample(*snapshot, {});
    Publish(std::move(snapshot), Clock::now(), 0);
  }

  // Later samples are taken on the sampling thread, so that a read that waits
  // (up to the sampler's deadline) never holds the event loop, and come back
  // to it to be published. A sample still out when the next is due is not
  // doubled: that one is skipped, and the lag says so.
  void SampleAsync() {
    if (sampling_busy_) return;
    sampling_busy_ = true;
    const auto started = Clock::now();
    const double lag_s = ToSeconds(started - next_sample_);
    boost::asio::post(sampling_, [this, started, lag_s, probing = ProbingDisks()] {
      auto snapshot = sampler_.Collect(procfs_, sysfs_, WallUnixSeconds());
      // The passive judge's minute closes here, off the event loop: a refit
      // of its models takes milliseconds.
      if (passive_) passive_->OnSample(*snapshot, probing);
      boost::asio::post(io_, [this, snapshot = std::move(snapshot), started, lag_s]() mutable {
        sampling_busy_ = false;
        if (!stopping_) Publish(std::move(snapshot), started, lag_s);
      });
    });
  }

  // A passive regression raised on `device` (on the sampling thread): its
  // probes, if any, run once to confirm it, on the event loop.
  void OnPassiveRaise(const std::string& device) {
    boost::asio::post(io_, [this, device] {
      if (!probes_ || !snapshot_ || !snapshot_->block_devices || stopping_) return;
      for (const collectors::BlockDevice& d : *snapshot_->block_devices) {
        if (d.name == device) probes_->Confirm(MakeDeviceId(d.major, d.minor));
      }
    });
  }

  // The whole disks a probe ran on since the last sample (running now, or
  // ended after it was taken), by kernel name: their I/O is in the
  // sample's counters, so the passive judge leaves their minutes unjudged.
  std::vector<std::string> ProbingDisks() const {
    std::vector<std::string> disks;
    if (!probes_ || !snapshot_ || !snapshot_->block_devices) return disks;
    for (const JobStatus& job : probes_->Scheduled().jobs) {
      if (!job.device) continue;
      const bool recent = job.last_end_s && *job.last_end_s >= snapshot_->monotonic_seconds;
      if (!job.running && !recent) continue;
      for (const collectors::BlockDevice& d : *snapshot_->block_devices) {
        if (MakeDeviceId(d.major, d.minor) != *job.device) continue;
        disks.push_back(d.is_partition ? d.parent : d.name);
      }
    }
    return disks;
  }

  void Publish(std::shared_ptr<const Snapshot> snapshot, Clock::time_point started, double lag_s) {
    snapshot_ = std::move(snapshot);
    if (probes_) probes_->OnSample(snapshot_);
    self_.SampleTaken(ToSeconds(Clock::now() - started), lag_s);
    collector_log_.Note(snapshot_->collectors);
  }

  void ScheduleSample() {
    next_sample_ += Interval();
    const auto now = Clock::now();
    if (next_sample_ + Interval() < now) next_sample_ = now;  // fell far behind (suspend): resync
    sample_timer_.expires_at(next_sample_);
    sample_timer_.async_wait([this](auto error) {
      if (error || stopping_) return;
      SampleAsync();
      ScheduleSample();
    });
  }

  void StartWatchdog() {
    const auto interval = systemd_.WatchdogInterval();
    if (!interval) return;
    watchdog_timer_.expires_after(*interval);
    watchdog_timer_.async_wait([this](auto error) {
      if (error || stopping_) return;
      // Pinging from the event loop proves the loop turns; requiring a fresh
      // sample proves the sampler does too. Otherwise systemd restarts us.
      if (SampleAgeSeconds() < 3 * ToSeconds(Interval())) {
        systemd_.WatchdogPing();
      }
      StartWatchdog();
    });
  }

  void OnSignal(const boost::system::error_code& error, int signal) {
    if (error) return;
    if (signal == SIGHUP) {
      Reload();
      signals_.async_wait([this](auto e, int s) { OnSignal(e, s); });
      return;
    }
    spdlog::info("received signal {}, stopping", signal);
    Stop();
  }

  void Reload() {
    systemd_.Reloading();
    auto config = EffectiveConfig(flags_);
    auto options = config ? SamplerOptionsFrom(*config)
                          : Result<SamplerOptions>(std::unexpected(config.error()));
    if (!options) {
      self_.ConfigLoaded(false, WallUnixSeconds());
      spdlog::error("config reload failed, keeping the running config: {}",
                    options.error().ToString());
      systemd_.Ready();
      return;
    }
    if (config->probes != config_.probes || config->state_dir != config_.state_dir ||
        config->passive != config_.passive) {
      spdlog::warn(
          "config reload: probes, passive and state_dir settings take effect at the next restart");
      config->probes = config_.probes;
      config->state_dir = config_.state_dir;
      config->passive = config_.passive;
    }
    if (WebChanged(config->web, config_.web) || config->procfs != config_.procfs ||
        config->sysfs != config_.sysfs || config->udev_data != config_.udev_data) {
      spdlog::warn("config reload: web and paths settings take effect at the next restart");
      config->web = config_.web;
      config->procfs = config_.procfs;
      config->sysfs = config_.sysfs;
      config->udev_data = config_.udev_data;
    }
    // On the sampling thread, between two samples: the Sampler has one owner.
    boost::asio::post(sampling_, [this, options = std::move(*options)]() mutable {
      sampler_.Reconfigure(std::move(options));
    });
    ApplyLogLevel(config->log_level);
    config_ = std::move(*config);
    self_.ConfigLoaded(true, WallUnixSeconds());
    spdlog::info("config reloaded from {}", config_.source.empty() ? "defaults" : config_.source);
    systemd_.Ready();
  }

  void Stop() {
    if (stopping_) return;
    stopping_ = true;
    systemd_.Stopping();
    sample_timer_.cancel();
    watchdog_timer_.cancel();
    if (probes_) probes_->Shutdown();
    signals_.cancel();
    server_->Shutdown(kShutdownGrace, [this] { io_.stop(); });
  }

  http::Response Handle(const http::Request& request) {
    const std::string_view path =
        std::string_view(request.target)
            .substr(0, std::min(request.target.find('?'), request.target.size()));
    if (path == "/metrics") return Metrics();
    if (path == "/healthz") return Health();
    if (path == "/") {
      const auto probes = probes_ ? probes_->Recorded() : nullptr;
      const auto passive = passive_ ? passive_->Latest() : nullptr;
      return http::Response{
          200,
          "text/html; charset=utf-8",
          RenderStatusPage({.sample = *snapshot_,
                            .probes = probes.get(),
                            .passive = passive.get(),
                            .listen_endpoint = server_ ? server_->local_endpoint() : "",
                            .now_seconds = WallUnixSeconds(),
                            .own_cgroup = probes_ ? probes_->OwnCgroup() : ""}),
          {},
          true};
    }
    return http::Response{404, "text/plain; charset=utf-8", "not found\n", {}, true};
  }

  http::Response Metrics() {
    std::string probe_text;  // a few dozen lines per job: rendered whole, now
    if (probes_) {
      RenderProbeMetrics(*probes_->Recorded(), probes_->Scheduled(), WallUnixSeconds(), probe_text);
    }
    if (passive_) RenderPassiveMetrics(*passive_->Latest(), probe_text);
    std::string self_text;  // iowatch's own: prometheus-cpp's registry and process_*
    self_.Render(SampleAgeSeconds(), self_text);
    http::Response response;
    response.content_type = "text/plain; version=0.0.4; charset=utf-8";
    // Streamed: the server asks for the next piece once the previous one is
    // on the wire, so a scrape holds ~64 KiB of text, not 4.4 MB (1,000
    // devices). The probe and self metrics are as of the request, and come last.
    response.stream = [cursor = MetricsCursor(snapshot_), probe_text = std::move(probe_text),
                       self_text = std::move(self_text)](std::string& out) mutable {
      if (cursor.Next(out, kMetricsPieceBytes)) return true;
      out += probe_text;
      out += self_text;
      return false;
    };
    return response;
  }

  // On the monotonic clock (Snapshot::monotonic_seconds says why).
  double SampleAgeSeconds() const { return MonotonicSeconds() - snapshot_->monotonic_seconds; }

  http::Response Health() {
    const double age = SampleAgeSeconds();
    const double limit = 3 * ToSeconds(Interval());
    if (age <= limit) return http::Response{200, "text/plain; charset=utf-8", "ok\n", {}, false};
    return http::Response{
        503,
        "text/plain; charset=utf-8",
        fmt::format("stale: last sample {:.1f} s ago (limit {:.1f} s)\n", age, limit),
        {},
        false};
  }

  config::Config config_;
  ServeFlags flags_;
  FileTree procfs_;
  FileTree sysfs_;
  Sampler sampler_;
  CollectorLog collector_log_{[](CollectorLog::Level level, const std::string& line) {
    if (level == CollectorLog::Level::kWarn) {
      spdlog::warn("{}", line);
    } else {
      spdlog::info("{}", line);
    }
  }};
  SelfMetrics self_;  // before server_, which counts into its registry
  boost::asio::io_context io_{1};
  // The Sampler's own thread (declared after io_, which its jobs post to, and
  // after sampler_; joined in Run before either goes).
  boost::asio::thread_pool sampling_{1};
  bool sampling_busy_ = false;  // a sample is out on the sampling thread
  boost::asio::steady_timer sample_timer_{io_};
  boost::asio::steady_timer watchdog_timer_{io_};
  boost::asio::signal_set signals_{io_, SIGINT, SIGTERM, SIGHUP};
  std::unique_ptr<http::Server> server_;
  std::unique_ptr<ProbeService> probes_;  // null when no probe is configured
  // Null when passive.enabled is false; fed on the sampling thread.
  std::unique_ptr<PassiveService> passive_;
  std::shared_ptr<const Snapshot> snapshot_;
  SystemdNotifier systemd_;
  Clock::time_point next_sample_{};
  bool stopping_ = false;
};

}  // namespace

Status CheckStartable(const config::Config& config) {
  if (auto options = SamplerOptionsFrom(config); !options) return ErrorOf(options);
  if (config.web.tls_cert_file.empty() && config.web.tls_key_file.empty()) return {};
  if (config.web.tls_cert_file.empty() || config.web.tls_key_file.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "HTTPS needs both tls_cert_file and tls_key_file, or neither for plain HTTP");
  }
  auto tls = http::MakeTlsServerContext(config.web.tls_cert_file, config.web.tls_key_file);
  if (!tls) return ErrorOf(tls);
  return {};
}

// A source that cannot run here leaves the config valid (serve runs
// without it), but the operator hears why now rather than from the log.
void SayWhatCannotRunHere(const SamplerOptions& options, const std::filesystem::path& file) {
  for (const SourceDescriptor& source : RegisteredSources()) {
    if (source.cannot_run_here == nullptr || !source.enabled(options)) continue;
    if (const auto cause = source.cannot_run_here(options)) {
      (void)std::fprintf(stderr, "%s: %.*s: the collector cannot run here: %s\n", file.c_str(),
                         static_cast<int>(source.config_switch.size()), source.config_switch.data(),
                         cause->c_str());
    }
  }
}

int RunCheckConfig(const std::filesystem::path& file) {
  auto loaded = config::LoadConfigFile(file, RegisteredSettings());
  Status startable = loaded ? CheckStartable(*loaded) : Status(std::unexpected(loaded.error()));
  if (!startable) {
    (void)std::fprintf(stderr, "%s\n", startable.error().ToString().c_str());
    return 2;
  }
  SayWhatCannotRunHere(*SamplerOptionsFrom(*loaded), file);
  // "valid" that did not reach its reader is not an answer.
  return std::printf("%s: valid\n", file.c_str()) > 0 && std::fflush(stdout) == 0 ? 0 : 2;
}

Result<config::Config> EffectiveConfig(const ServeFlags& flags) {
  Result<config::Config> loaded =
      flags.config_file ? config::LoadConfigFile(*flags.config_file, RegisteredSettings())
                        : config::Config{};
  if (!loaded) return loaded;
  config::Config& c = *loaded;
  if (flags.listen_address) c.web.listen_address = *flags.listen_address;
  if (flags.procfs) c.procfs = *flags.procfs;
  if (flags.sysfs) c.sysfs = *flags.sysfs;
  if (flags.udev_data) c.udev_data = *flags.udev_data;
  if (flags.state_dir) c.state_dir = *flags.state_dir;
  if (flags.log_level) c.log_level = *flags.log_level;
  return loaded;
}

int RunServe(const ServeFlags& flags) {
  auto config = EffectiveConfig(flags);
  if (!config) {
    spdlog::critical("{}", config.error().ToString());
    return 2;
  }
  ApplyLogLevel(config->log_level);
  auto options = SamplerOptionsFrom(*config);
  if (!options) {
    spdlog::critical("{}", options.error().ToString());
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(config->state_dir, ec);
  if (ec) spdlog::warn("state directory {}: {}", config->state_dir, ec.message());
  if (std::signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
    spdlog::warn("cannot ignore SIGPIPE: {}", ErrnoText(errno));
  }
  // A fixed threshold: blocks of 128 KiB and more (a snapshot's per-device
  // arrays, each sample) are mmapped and returned to the kernel when freed.
  // glibc's default raises the threshold to the size of the largest block
  // freed, after which such blocks come from the heap and leave it larger.
  // An arena per thread stays: with one (M_ARENA_MAX), 0.3-0.6 MiB less
  // was resident on 1,000 devices, but the sources, sampling concurrently on
  // their workers, waited on its lock (diskstats a third slower).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);  // NOLINT(concurrency-mt-unsafe): no thread yet
  // SMART's capabilities (the smart.conf drop-in) for smartctl only, held
  // before any thread starts: capabilities are per thread.
  if (const std::string held = collectors::HoldSmartctlCapabilities(); !held.empty()) {
    spdlog::info("{}", held);
  }
  App app(std::move(*config), flags, std::move(*options));
  return app.Run();
}

}  // namespace iowatch::daemon
