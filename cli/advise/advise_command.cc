#include "cli/advise/advise_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "advice/advice.h"
#include "cli/shared/cli_output.h"
#include "collectors/disk/disk_util.h"
#include "common/file_tree.h"
#include "common/terminal_text.h"

namespace iowatch::daemon {
namespace {

using advice::DeviceFacts;
using collectors::BlockDevice;

struct AdviseOptions {
  std::vector<std::string> devices;
  bool json = false;
  int interval_seconds = 0;
};

Result<AdviseOptions> ParseAdviseArgs(const std::vector<std::string>& args) {
  AdviseOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if ((a == "-o" || a == "--output-format") && i + 1 < args.size()) {
      const std::string& format = args[++i];
      if (format != "JSON" && format != "json") {
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("-o: expected JSON, found {:?}", format));
      }
      o.json = true;
    } else if (a == "--interval" && i + 1 < args.size()) {
      const std::string& text = args[++i];
      const auto [end, ec] =
          std::from_chars(text.data(), text.data() + text.size(), o.interval_seconds);
      if (ec != std::errc() || end != text.data() + text.size() || o.interval_seconds < 1) {
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("--interval: expected whole seconds, found {:?}", text));
      }
    } else if (a.starts_with("-")) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("{:?}: expected -o JSON, --interval SECONDS or device names", a));
    } else {
      o.devices.push_back(a);
    }
  }
  return o;
}

struct Gathered {
  std::vector<DeviceFacts> facts;
  std::vector<std::string> notes;  // what could not be read, said in the output
};

std::optional<advice::FsStripeHints> Superblock(const std::string& name, bool host,
                                                std::vector<std::string>& notes) {
  if (!host) return std::nullopt;
  auto hints = advice::ReadFsStripeHints("/dev/" + name);
  if (!hints) {
    notes.push_back(fmt::format("{}: superblock not read: {}", name, hints.error().ToString()));
    return std::nullopt;
  }
  return *hints;
}

Result<Gathered> Gather(const GlobalOptions& global, const AdviseOptions& o) {
  const FileTree sysfs(global.sysfs);
  auto devices = collectors::DiscoverBlockDevices(sysfs);
  if (!devices) return ErrorOf(devices);
  const bool host = global.sysfs == "/sys";
  Gathered g;
  if (!host) g.notes.emplace_back("superblocks not read: --path.sysfs is not the host's");
  std::vector<std::optional<collectors::DiskCounters>> before;
  for (const BlockDevice& d : *devices) {
    if (d.is_partition) continue;
    // Named, or all that hold data (an unbound loop device has size 0).
    if (o.devices.empty() ? d.size_bytes == 0
                          : std::ranges::find(o.devices, d.name) == o.devices.end()) {
      continue;
    }
    DeviceFacts f;
    f.disk = d;
    f.filesystem = Superblock(d.name, host, g.notes);
    for (const BlockDevice& p : *devices) {
      if (p.is_partition && p.parent == d.name) {
        f.partitions.push_back({p, Superblock(p.name, host, g.notes)});
      }
    }
    auto counters = collectors::ReadDeviceCounters(sysfs, d);
    before.push_back(counters ? std::optional(*counters) : std::nullopt);
    g.facts.push_back(std::move(f));
  }
  for (const std::string& name : o.devices) {
    if (std::ranges::none_of(g.facts, [&](const DeviceFacts& f) { return f.disk.name == name; })) {
      return MakeError(ErrorCode::kNotFound,
                       fmt::format("{}: no such whole disk in sysfs", TerminalText(name)));
    }
  }
  if (o.interval_seconds > 0) std::this_thread::sleep_for(std::chrono::seconds(o.interval_seconds));
  for (size_t i = 0; i < g.facts.size(); ++i) {
    if (!before[i]) continue;
    DeviceFacts& f = g.facts[i];
    if (o.interval_seconds == 0) {
      f.observed = advice::ObserveSizes({}, *before[i], "diskstats since boot");
    } else if (auto after = collectors::ReadDeviceCounters(sysfs, f.disk)) {
      f.observed = advice::ObserveSizes(*before[i], *after,
                                        fmt::format("diskstats over {} s", o.interval_seconds));
    }
  }
  return g;
}

std::string GeometryText(const DeviceFacts& f) {
  const collectors::QueueAttributes& q = f.disk.queue;
  std::string out = fmt::format(
      "{}: physical_block_size {}, minimum_io_size {}, optimal_io_size {}, max_sectors_kb {} "
      "(hw {}), read_ahead_kb {}, scheduler {}, nr_requests {}, {}\n",
      TerminalText(f.disk.name), q.physical_block_size, q.minimum_io_size, q.optimal_io_size,
      q.max_sectors_kb, q.max_hw_sectors_kb, q.read_ahead_kb,
      q.scheduler.empty() ? "-" : TerminalText(q.scheduler), q.nr_requests,
      q.rotational.value_or(false) ? "rotational" : "non-rotational");
  if (const auto s = advice::StripeOf(f.disk)) {
    out += fmt::format("  stripe: {} chunk {} KiB × {} data disks = full stripe {} KiB{}\n",
                       s->source, s->chunk / 1024, s->data_disks, s->full_stripe / 1024,
                       s->parity ? " (parity)" : "");
  }
  for (const advice::PartitionFacts& p : f.partitions) {
    out += fmt::format("  {}: start sector {}", TerminalText(p.partition.name),
                       p.partition.start_sector);
    if (p.filesystem) {
      out += fmt::format(", {} stripe unit {} KiB, width {} KiB", p.filesystem->filesystem,
                         p.filesystem->stripe_unit / 1024, p.filesystem->stripe_width / 1024);
    }
    out += "\n";
  }
  const advice::ObservedSizes& o = f.observed;
  out += fmt::format(
      "  observed ({}): {} reads averaging {:.1f} KiB, {} writes averaging {:.1f} KiB\n", o.source,
      o.reads, o.average_read_bytes / 1024, o.writes, o.average_write_bytes / 1024);
  return out;
}

std::string Text(const Gathered& g) {
  std::string out;
  for (const DeviceFacts& f : g.facts) {
    out += GeometryText(f);
    for (const advice::AdviceFinding& a : advice::Advise(f)) {
      // The device's name is in the text and the suggestion too.
      out += fmt::format("  {} {} {}: {}\n    suggestion: {}\n", advice::ToString(a.severity),
                         a.finding, TerminalText(a.device), TerminalText(a.text),
                         TerminalText(a.suggestion));
    }
    out += "\n";
  }
  for (const std::string& note : g.notes) out += "note: " + TerminalText(note) + "\n";
  return out;
}

nlohmann::json FilesystemJson(const advice::FsStripeHints& fs) {
  return {{"type", fs.filesystem},
          {"block_size", fs.block_size},
          {"stripe_unit_bytes", fs.stripe_unit},
          {"stripe_width_bytes", fs.stripe_width}};
}

std::string Json(const Gathered& g) {
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceFacts& f : g.facts) {
    nlohmann::json d = {{"device", f.disk.name},
                        {"observed",
                         {{"source", f.observed.source},
                          {"reads", f.observed.reads},
                          {"writes", f.observed.writes},
                          {"average_read_bytes", f.observed.average_read_bytes},
                          {"average_write_bytes", f.observed.average_write_bytes}}},
                        {"partitions", nlohmann::json::array()},
                        {"findings", nlohmann::json::array()}};
    if (const auto s = advice::StripeOf(f.disk)) {
      d["stripe"] = {{"source", s->source},
                     {"chunk_bytes", s->chunk},
                     {"data_disks", s->data_disks},
                     {"full_stripe_bytes", s->full_stripe},
                     {"parity", s->parity}};
    }
    for (const advice::PartitionFacts& p : f.partitions) {
      nlohmann::json part = {{"name", p.partition.name},
                             {"start_sector", p.partition.start_sector}};
      if (p.filesystem) part["filesystem"] = FilesystemJson(*p.filesystem);
      d["partitions"].push_back(std::move(part));
    }
    if (f.filesystem) d["filesystem"] = FilesystemJson(*f.filesystem);
    for (const advice::AdviceFinding& a : advice::Advise(f)) {
      d["findings"].push_back({{"device", a.device},
                               {"finding", a.finding},
                               {"severity", advice::ToString(a.severity)},
                               {"text", a.text},
                               {"suggestion", a.suggestion}});
    }
    devices.push_back(std::move(d));
  }
  return nlohmann::json{{"devices", devices}, {"notes", g.notes}}.dump(2) + "\n";
}

}  // namespace

int RunAdvise(const GlobalOptions& global, const std::vector<std::string>& args) {
  auto options = ParseAdviseArgs(args);
  if (!options) return ReportError("advise", options.error());
  auto gathered = Gather(global, *options);
  if (!gathered) return ReportError("advise", gathered.error());
  if (Status w = WriteStdout(options->json ? Json(*gathered) : Text(*gathered)); !w) {
    return ReportError("advise", w.error());
  }
  return 0;
}

}  // namespace iowatch::daemon
