#include "collectors/meminfo.h"

#include "collectors/text_scan.h"

namespace iowatch::collectors {

Meminfo ParseMeminfo(std::string_view text, std::string_view path) {
  Meminfo meminfo;
  ForEachLine(text, [&](std::string_view line, int line_number) {
    const auto fields = SplitFields(line);
    if (fields.empty()) return;
    const bool has_unit = fields.size() == 3 && fields[2] == "kB";
    const auto value = fields.size() >= 2 ? ParseU64(fields[1]) : std::nullopt;
    if (!fields[0].ends_with(':') || fields[0].size() < 2 || !value ||
        (fields.size() == 3 && !has_unit) || fields.size() > 3) {
      meminfo.values.skipped.push_back(Error{
          ErrorCode::kParse, fmt::format("expected 'Name: <unsigned> [kB]', found '{}'", line),
          std::string(path), line_number, 0});
      return;
    }
    meminfo.values.entries.emplace_back(std::string(fields[0].substr(0, fields[0].size() - 1)),
                                        *value);
    meminfo.in_kib.push_back(has_unit);
  });
  return meminfo;
}

}  // namespace iowatch::collectors
