// The HTML page served at "/": version, links, and the devices of the latest
// sample. Self-contained (no external assets), escaped.
// Thread-safety: pure function.
#pragma once

#include <string>

#include "daemon/http/server.h"
#include "daemon/snapshot.h"

namespace iowatch::daemon {

http::Response LandingPage(const Snapshot& snapshot, const std::string& listen_endpoint);

std::string HtmlEscape(std::string_view text);

}  // namespace iowatch::daemon
