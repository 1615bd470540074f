#include "cli/sweep/sweep_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string_view>

namespace iowatch::daemon {
namespace {

std::unexpected<Error> Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

std::vector<std::string_view> SplitList(std::string_view text) {
  std::vector<std::string_view> items;
  while (true) {
    const size_t comma = text.find(',');
    items.push_back(text.substr(0, comma));
    if (comma == std::string_view::npos) return items;
    text.remove_prefix(comma + 1);
  }
}

// Each item through the job option `option` (so sizes and depths read as
// `iowatch probe` reads them), its value taken from the scratch spec.
template <typename T>
Result<std::vector<T>> ParseListVia(std::string_view option, std::string_view text,
                                    T (*pick)(const probes::JobSpec&)) {
  std::vector<T> values;
  for (const std::string_view item : SplitList(text)) {
    probes::JobSpec scratch;
    if (auto ok = probes::ApplyJobOption(scratch, option, item); !ok) {
      return Invalid("--" + ok.error().message);
    }
    values.push_back(pick(scratch));
  }
  return values;
}

// --rw=read,write  --pattern=random,sequential  --mode=direct,buffered,raw
template <typename T>
Result<std::vector<T>> ParseWords(std::string_view key, std::string_view text,
                                  std::span<const EnumName<T>> words) {
  std::vector<T> values;
  for (const std::string_view item : SplitList(text)) {
    const std::optional<T> value = ValueIn(words, item);
    if (!value) {
      return Invalid(
          fmt::format("--{}: expected a list of {}, found {:?}", key, NamesIn(words, ", "), item));
    }
    values.push_back(*value);
  }
  return values;
}

constexpr EnumName<bool> kRwWords[] = {{false, "read"}, {true, "write"}};
constexpr EnumName<bool> kPatternWords[] = {{true, "random"}, {false, "sequential"}};

Result<bool> Flag(std::string_view key, std::string_view value, bool has_value) {
  if (!has_value || value == "1") return true;
  if (value == "0") return false;
  return Invalid(fmt::format("--{}: expected 0 or 1, found {:?}", key, value));
}

Result<int64_t> SweepId(std::string_view text) {
  int64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0) {
    return Invalid(
        fmt::format("--compare: expected two sweep ids (iowatch sweep --list), found "
                    "{:?}",
                    text));
  }
  return id;
}

class SweepArgParser {
 public:
  explicit SweepArgParser(SweepOptions& options) : o_(options) {}

  Status Grid(std::string_view key, std::string_view value) {
    probes::SweepGrid& g = o_.grid;
    if (key == "bs")
      return Assign(g.block_sizes,
                    ParseListVia<uint64_t>("bs", value,
                                           [](const probes::JobSpec& s) { return s.block_size; }));
    if (key == "iodepth")
      return Assign(g.depths,
                    ParseListVia<uint32_t>("iodepth", value,
                                           [](const probes::JobSpec& s) { return s.iodepth; }));
    if (key == "rw") return Assign(g.writes, ParseWords<bool>(key, value, kRwWords));
    if (key == "pattern") return Assign(g.randoms, ParseWords<bool>(key, value, kPatternWords));
    if (key == "mode") {
      return Assign(g.modes, ParseWords<probes::SweepMode>(key, value, probes::kSweepModes));
    }
    auto budget = probes::ParseFioTime(value, std::chrono::seconds(1));
    if (!budget) return Invalid("--budget: " + budget.error().message);
    g.budget = *budget;
    return {};
  }

  Status Job(std::string_view key, std::string_view value) {
    for (const std::string_view grid_only :
         {"direct", "runtime", "time_based", "ramp_time", "numjobs", "readwrite", "blocksize"}) {
      if (key == grid_only) {
        return Invalid(
            fmt::format("--{}: set by the sweep for each point (the grid: --bs, "
                        "--iodepth, --rw, --pattern, --mode, --budget)",
                        key));
      }
    }
    if (auto ok = probes::ApplyJobOption(o_.base, key, value); !ok) {
      return Invalid("--" + ok.error().message);
    }
    size_given_ = size_given_ || key == "size";
    return {};
  }

  bool SizeGiven() const { return size_given_; }

 private:
  template <typename T>
  static Status Assign(std::vector<T>& out, Result<std::vector<T>> values) {
    if (!values) return ErrorOf(values);
    out = std::move(*values);
    return {};
  }

  SweepOptions& o_;
  bool size_given_ = false;
};

Status ParseOne(SweepOptions& o, SweepArgParser& parser, std::string_view key,
                std::string_view value, bool has_value) {
  if (key == "bs" || key == "iodepth" || key == "rw" || key == "pattern" || key == "mode" ||
      key == "budget") {
    return parser.Grid(key, value);
  }
  if (key == "output-format" || key == "o") {
    if (value == "table")
      o.output = SweepOutput::kTable;
    else if (value == "json" || value == "JSON")
      o.output = SweepOutput::kJson;
    else if (value == "svg")
      o.output = SweepOutput::kSvg;
    else
      return Invalid(
          fmt::format("--output-format: expected table, json or svg, found {:?}", value));
    return {};
  }
  if (key == "svg") {
    o.svg_file = value;
    return {};
  }
  if (key == "latency") {
    auto latency = ParseWords<probes::SweepLatency>(key, value, probes::kSweepLatencies);
    if (!latency) return ErrorOf(latency);
    if (latency->size() != 1) {
      return Invalid("--latency: expected one of " +
                     NamesIn<probes::SweepLatency>(probes::kSweepLatencies, ", "));
    }
    o.latency = latency->front();
    return {};
  }
  if (key == "state.dir") {
    o.state_dir = value;
    return {};
  }
  if (key == "path.sysfs") {
    o.policy.sysfs = value;
    return {};
  }
  for (auto [name, target] :
       {std::pair{"allow-block-device", &o.policy.allow_block_device},
        std::pair{"destructive", &o.policy.destructive}, std::pair{"list", &o.list}}) {
    if (key != name) continue;
    auto on = Flag(key, value, has_value);
    if (!on) return ErrorOf(on);
    *target = *on;
    return {};
  }
  if (key == "no-store") {
    o.store = false;
    return {};
  }
  auto push = TakePushOption(key, value, o.push);
  if (!push) return ErrorOf(push);
  if (*push) return {};
  return parser.Job(key, value);
}

}  // namespace

Result<SweepOptions> ParseSweepArgs(const std::vector<std::string>& args,
                                    const probes::TargetPolicy& policy) {
  SweepOptions o;
  o.policy = policy;
  o.base.name = "sweep";
  o.base.engine = probes::EngineKind::kIoUring;
  SweepArgParser parser(o);
  for (size_t i = 0; i < args.size(); ++i) {
    std::string spelled = args[i];  // -o FORMAT is --output-format=FORMAT
    if (spelled == "-o" && i + 1 < args.size()) spelled = "--output-format=" + args[++i];
    std::string_view arg = spelled;
    if (arg == "--help" || arg == "-h") {
      o.help = true;
      return o;
    }
    if (arg == "--compare") {
      if (i + 2 >= args.size()) return Invalid("--compare: expected two sweep ids");
      auto a = SweepId(args[i + 1]);
      if (!a) return ErrorOf(a);
      auto b = SweepId(args[i + 2]);
      if (!b) return ErrorOf(b);
      o.compare = std::pair{*a, *b};
      i += 2;
      continue;
    }
    if (!arg.starts_with("--")) {
      return Invalid(fmt::format("expected an option such as --bs=4k,64k, found {:?}", arg));
    }
    arg.remove_prefix(2);
    const size_t eq = arg.find('=');
    const std::string_view key = arg.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "" : arg.substr(eq + 1);
    if (auto ok = ParseOne(o, parser, key, value, eq != std::string_view::npos); !ok) {
      return ErrorOf(ok);
    }
  }
  if (o.list || o.compare) return o;
  if (auto push = CheckPushOptions(o.push); !push) return ErrorOf(push);
  if (!o.base.directory.empty() && !parser.SizeGiven()) o.base.size = 1ULL << 30;
  if (auto ok = probes::ValidateJobSpec(o.base); !ok) return ErrorOf(ok);
  if (auto runtime = probes::PointRuntime(o.grid); !runtime) return ErrorOf(runtime);
  return o;
}

std::string SweepUsage() {
  return "Usage: iowatch sweep (--filename=PATH | --directory=DIR [--size=1g]) [OPTION]...\n"
         "       iowatch sweep --list [--state.dir=DIR]\n"
         "       iowatch sweep --compare A B [--state.dir=DIR]\n"
         "\n"
         "Characterises a device: a grid of short runs of the probe engine, every point\n"
         "budget / points long; IOPS, bandwidth, latency p50/p99, CPU % and CPU s/GiB per\n"
         "point, then the knee, the latency-optimal depth and buffered against direct.\n"
         "\n"
         "Grid (lists, comma-separated):\n"
         "  --bs=4k,16k,64k,256k,1m,4m      block sizes\n"
         "  --iodepth=1,2,4,8,16,32,64      queue depths\n"
         "  --rw=read,write                 directions\n"
         "  --pattern=random,sequential     access patterns\n"
         "  --mode=direct,buffered          also raw: the block device itself, read-only\n"
         "                                  (needs --allow-block-device; writes also "
         "--destructive)\n"
         "  --budget=10m                    the whole sweep's time\n"
         "Target: --filename or --directory (file sweep.0.0), --size, --ioengine (io_uring),\n"
         "  --offset and the other `iowatch probe` options but those the grid sets.\n"
         "Output: --output-format=table|json|svg (-o), --svg=FILE (the chart, too).\n"
         "  --latency=lat                   the latency the table, chart, findings and\n"
         "                                  --compare show, in fio's names: lat (submission\n"
         "                                  to completion) or clat (issue to completion);\n"
         "                                  JSON and the pushed series carry both\n"
         "Store: the sweep is stored in --state.dir (default /var/lib/iowatch) unless --no-store;\n"
         "  --list shows the stored sweeps, --compare A B puts two side by side.\n"
         "Pushgateway (the completed points as iowatch_sweep_* gauges, after the output):\n" +
         PushUsage("iowatch_sweep");
}

}  // namespace iowatch::daemon
