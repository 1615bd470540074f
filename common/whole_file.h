// Writing a whole file so that it is either the new text or what was there
// before, never half of it (a full disk, a killed process, a power loss): the
// text goes to a temporary file of a unique name beside it (created with
// O_EXCL | O_NOFOLLOW, so neither a symlink planted under that name nor a
// second writer of the same path is written through), is synced, renamed
// over the path, and the directory synced (XFS and ext4 may otherwise leave
// an empty file after a power loss).
// What is already at the path depends on whose path it is:
// - a path the user named (an export's FILE, the default): a pipe, a FIFO, a
//   terminal or /dev/stdout there is written in place; a block device is
//   refused, through a symlink or not (a JSON document is never meant for a
//   disk);
// - the daemon's own state (replace_only): the path is never opened, only
//   replaced: a symlink, a FIFO or a device there is replaced by the new
//   regular file, never followed, waited on or written.
// Thread-safety: pure functions; two writers of one path each rename a whole
// file of their own over it, the last one wins.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace iowatch {

struct WholeFileOptions {
  bool replace_only = false;  // the daemon's own state file: see above
};

Status WriteWholeFile(const std::string& path, std::string_view text,
                      const WholeFileOptions& options = {});

}  // namespace iowatch
