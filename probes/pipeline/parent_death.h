// A forked child that must not outlive the process that forked it (a numjobs
// clone: an orphan would go on writing its probe file and its pipe for no
// one). PR_SET_PDEATHSIG alone has a race: a parent that dies between fork()
// and the child's prctl() never signals it, since the child was already
// re-parented (to init or a subreaper) when it asked. So the child compares
// getppid(), after the prctl, with the pid its parent had before the fork.
// Thread-safety: call it in the child, first thing after fork().
#pragma once

#include <sys/types.h>

namespace iowatch::probes {

// Asks for `signal` when the parent dies; _exit(`status`) at once when the
// parent (`parent`, getpid() read before fork) is already gone.
void ExitWithParent(pid_t parent, int signal, int status);

}  // namespace iowatch::probes
