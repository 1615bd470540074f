#pragma once
#include <string>
#include <vector>

#include "cli/shared/global_options.h"
namespace iowatch::daemon {
int RunVmstat(const GlobalOptions& global, const std::vector<std::string>& args);
}
