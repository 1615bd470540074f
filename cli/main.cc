// iowatch: one binary, subcommands. The command line is parsed and
// dispatched by the table of subcommands (cli/command_table.h); each
// subcommand lives in its own folder.
#include <cstdio>
#include <exception>

#include "cli/command_table.h"

int main(int argc, char** argv) {
  // Errors are values everywhere; what still throws (an allocation failing, a
  // library's exception nobody expected) ends here with a line, not an abort.
  try {
    return iowatch::daemon::RunCommandLine(argc, argv);
  } catch (const std::exception& e) {
    (void)std::fprintf(stderr, "iowatch: unexpected error: %s\n", e.what());
  }
  return 70;  // EX_SOFTWARE
}
