#include "daemon/sampling/thin_pool_health.h"

#include <fmt/format.h>

namespace iowatch::daemon {
namespace {

std::optional<double> PercentOf(const std::optional<uint64_t>& used,
                                const std::optional<uint64_t>& total) {
  if (!used || !total || *total == 0) return std::nullopt;
  return 100.0 * static_cast<double>(*used) / static_cast<double>(*total);
}

std::string ModeProblem(collectors::ThinPoolMode mode) {
  switch (mode) {
    case collectors::ThinPoolMode::kRw:
      return "";
    case collectors::ThinPoolMode::kOutOfDataSpace:
      return "out of data space: writes to new blocks of its thin volumes queue or fail";
    case collectors::ThinPoolMode::kRo:
      return "read-only (metadata full, or a metadata error): every write to its thin volumes "
             "fails";
    case collectors::ThinPoolMode::kFail:
      return "failed: the pool does not serve I/O";
    case collectors::ThinPoolMode::kError:
      return "status unreadable: the kernel could not read it (dmsetup status says Error)";
  }
  return "";
}

ThinPoolHealth HealthOf(const collectors::ThinPool& p) {
  ThinPoolHealth h{.pool = p.name,
                   .device = p.device,
                   .mode = std::string(collectors::ThinPoolModeName(p.status.mode)),
                   .data_bytes = p.DataBytes(),
                   .data_used_percent = PercentOf(p.DataUsedBytes(), p.DataBytes()),
                   .metadata_bytes = p.MetadataBytes(),
                   .metadata_used_percent = PercentOf(p.MetadataUsedBytes(), p.MetadataBytes()),
                   .needs_check = false,
                   .error_if_no_space = false,
                   .warnings = {},
                   .problems = {}};
  if (p.status.usage) {
    h.needs_check = p.status.usage->needs_check.value_or(false);
    h.error_if_no_space = p.status.usage->error_if_no_space.value_or(false);
  }
  if (const std::string problem = ModeProblem(p.status.mode); !problem.empty()) {
    h.problems.push_back("thin pool " + problem);
  }
  if (h.needs_check) {
    h.problems.emplace_back(
        "thin pool needs_check: its metadata must be repaired (lvconvert "
        "--repair) before it takes writes again");
  }
  if (h.data_used_percent && *h.data_used_percent >= kThinPoolWarnPercent) {
    h.warnings.push_back(
        fmt::format("data {:.0f} % used: extend the pool (lvextend)", *h.data_used_percent));
  }
  if (h.metadata_used_percent && *h.metadata_used_percent >= kThinPoolWarnPercent) {
    h.warnings.push_back(
        fmt::format("metadata {:.0f} % used: full metadata makes the pool read-only (lvextend "
                    "--poolmetadatasize)",
                    *h.metadata_used_percent));
  }
  return h;
}

std::string Share(const char* what, const std::optional<double>& percent,
                  const std::optional<uint64_t>& bytes) {
  if (!percent || !bytes) return "";
  return fmt::format(", {} {:.0f} % of {}", what, *percent, ThinPoolSizeText(*bytes));
}

}  // namespace

std::string ThinPoolSizeText(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  return b >= 1e9 ? fmt::format("{:.1f} GB", b / 1e9) : fmt::format("{:.1f} MB", b / 1e6);
}

std::vector<ThinPoolHealth> BuildThinPoolHealth(const Snapshot& s) {
  std::vector<ThinPoolHealth> out;
  out.reserve(s.thin_pool.pools.size());
  for (const collectors::ThinPool& p : s.thin_pool.pools) out.push_back(HealthOf(p));
  return out;
}

std::string DescribeThinPool(const ThinPoolHealth& p) {
  std::string out = p.mode + Share("data", p.data_used_percent, p.data_bytes) +
                    Share("metadata", p.metadata_used_percent, p.metadata_bytes);
  if (p.error_if_no_space) out += ", error_if_no_space";
  if (p.needs_check) out += ", needs_check";
  return out;
}

}  // namespace iowatch::daemon
