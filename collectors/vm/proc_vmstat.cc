#include "collectors/vm/proc_vmstat.h"

#include "collectors/text/text_scan.h"

namespace iowatch::collectors {

NamedValues ParseProcVmstat(std::string_view text, std::string_view path) {
  NamedValues values;
  ForEachLine(text, [&](std::string_view line, int line_number) {
    const auto fields = SplitFields(line);
    if (fields.empty()) return;
    const auto value = fields.size() == 2 ? ParseU64(fields[1]) : std::nullopt;
    if (!value) {
      values.skipped.push_back(
          Error::Parse(fmt::format("expected 'name <unsigned>', found '{}'", line),
                       std::string(path), line_number));
      return;
    }
    values.entries.emplace_back(std::string(fields[0]), *value);
  });
  return values;
}

}  // namespace iowatch::collectors
