// Names made safe for a terminal. Device, cgroup, file and job names, paths
// and disk models come from the system or a user as bytes, and a text output
// that prints them raw hands whoever chose the name the terminal: "\e]0;X\a"
// sets its title, "\e[2J" clears it, "\r" and "\n" forge lines. TerminalText
// is the one function every text output passes such a name through (JSON,
// Prometheus and HTML outputs have escapes of their own).
//
// The form, unambiguous and reversible (C's, as `ls -b` prints names):
//   - a backslash is written "\\";
//   - each byte of a C0 control (0x00-0x1F), DEL (0x7F), a C1 control
//     (U+0080-U+009F, two bytes in UTF-8) or invalid UTF-8 is written "\xHH",
//     two lower-case hex digits ("\x1b", "\xc2\x9b", "\xff");
//   - every other byte is kept: valid UTF-8 text, accents and symbols
//     included, reads as it is.
// So "\x" in the output always stands for one byte, and "\\" for a backslash
// (systemd's escaped unit names read "getty\\x2dtty1.service").
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace iowatch {

std::string TerminalText(std::string_view bytes);
void AppendTerminalText(std::string& out, std::string_view bytes);

}  // namespace iowatch
