#include "collectors/vm/meminfo.h"

#include "collectors/text/text_scan.h"

namespace iowatch::collectors {

namespace {

struct MeminfoLine {
  std::string_view name;  // without its colon
  uint64_t value = 0;
  bool in_kib = false;
};

// "Name: <unsigned> [kB]"; nullopt for anything else.
std::optional<MeminfoLine> ParseMeminfoLine(std::span<const std::string_view> fields) {
  if (fields.size() < 2 || fields.size() > 3) return std::nullopt;
  if (fields.size() == 3 && fields[2] != "kB") return std::nullopt;
  if (fields[0].size() < 2 || !fields[0].ends_with(':')) return std::nullopt;
  const std::optional<uint64_t> value = ParseU64(fields[1]);
  if (!value) return std::nullopt;
  return MeminfoLine{fields[0].substr(0, fields[0].size() - 1), *value, fields.size() == 3};
}

}  // namespace

Meminfo ParseMeminfo(std::string_view text, std::string_view path) {
  Meminfo meminfo;
  ForEachLine(text, [&](std::string_view line, int line_number) {
    const auto fields = SplitFields(line);
    if (fields.empty()) return;
    const std::optional<MeminfoLine> parsed = ParseMeminfoLine(fields);
    if (!parsed) {
      meminfo.values.skipped.push_back(
          Error::Parse(fmt::format("expected 'Name: <unsigned> [kB]', found '{}'", line),
                       std::string(path), line_number));
      return;
    }
    meminfo.values.entries.emplace_back(std::string(parsed->name), parsed->value);
    meminfo.in_kib.push_back(parsed->in_kib);
  });
  return meminfo;
}

Status CheckMeminfoUsable(const Meminfo& meminfo, std::string_view path) {
  if (!meminfo.values.entries.empty()) return {};
  return MakeError(ErrorCode::kParse,
                   fmt::format("expected 'Name: <unsigned> [kB]' lines, found {}",
                               meminfo.values.skipped.empty() ? "none" : "only malformed ones"),
                   std::string(path));
}

}  // namespace iowatch::collectors
