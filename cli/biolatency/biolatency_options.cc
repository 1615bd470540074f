#include "cli/biolatency/biolatency_options.h"

namespace iowatch::daemon {

Result<BiolatencyOptions> ParseBiolatencyArgs(const std::vector<std::string>& args) {
  bool queued = false;
  auto shared =
      ParseReportArgs(args, "usage: iowatch biolatency [-d DEV] [-Q] [-o JSON] [interval [count]]",
                      [&queued](const std::vector<std::string>& all, size_t& i) -> Result<bool> {
                        if (all[i] != "-Q") return false;
                        queued = true;
                        return true;
                      });
  if (!shared) return ErrorOf(shared);
  return BiolatencyOptions{std::move(*shared), queued};
}

}  // namespace iowatch::daemon
