#pragma once
#include <string>
#include <vector>

#include "daemon/cli/global_options.h"
namespace iowatch::daemon {
int RunIostat(const GlobalOptions& global, const std::vector<std::string>& args);
}
