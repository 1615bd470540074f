// Text made safe inside HTML, SVG or XML markup (element text and quoted
// attribute values): & < > " ' escaped. The status page and `iowatch
// sweep`'s chart both print names that are not ours (devices, cgroups, paths).
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace iowatch {

std::string HtmlEscape(std::string_view text);

}  // namespace iowatch
