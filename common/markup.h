// Text made safe inside HTML, SVG or XML markup (element text and quoted
// attribute values): & < > " ' escaped. The status page and `iowatch
// sweep`'s chart both print names that are not ours (devices, cgroups, paths,
// label values), which may hold any byte: invalid UTF-8 becomes U+FFFD (as
// ToValidUtf8) and a control character (C0, DEL, C1) becomes visible text,
// "\x1B" or "\u0085", so that nothing invisible reaches the page and XML
// (which forbids most C0 characters) stays well-formed.
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace iowatch {

std::string HtmlEscape(std::string_view text);

}  // namespace iowatch
