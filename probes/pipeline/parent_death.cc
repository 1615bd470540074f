#include "probes/pipeline/parent_death.h"

#include <sys/prctl.h>
#include <unistd.h>

namespace iowatch::probes {

void ExitWithParent(pid_t parent, int signal, int status) {
  prctl(PR_SET_PDEATHSIG, signal);
  // After the prctl: a parent that dies from now on sends the signal; one
  // that died before has left this process another parent.
  if (getppid() != parent) _exit(status);
}

}  // namespace iowatch::probes
