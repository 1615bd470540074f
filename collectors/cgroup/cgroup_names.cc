#include "collectors/cgroup/cgroup_names.h"

#include <algorithm>

namespace iowatch::collectors {

std::string UnitOf(std::string_view cgroup_path) {
  const size_t slash = cgroup_path.rfind('/');
  const std::string_view last =
      slash == std::string_view::npos ? cgroup_path : cgroup_path.substr(slash + 1);
  constexpr std::string_view kSuffixes[] = {".service", ".scope", ".slice",
                                            ".socket",  ".mount", ".swap"};
  for (const std::string_view suffix : kSuffixes) {
    if (last.size() > suffix.size() && last.ends_with(suffix)) return std::string(last);
  }
  return {};
}

size_t CgroupDepth(std::string_view cgroup_path) {
  if (cgroup_path.empty()) return 0;
  return static_cast<size_t>(std::ranges::count(cgroup_path, '/')) + 1;
}

}  // namespace iowatch::collectors
