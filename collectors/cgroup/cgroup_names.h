// Names of cgroups as labels: the path relative to the hierarchy's root
// ("system.slice/postgresql.service", "" for the root itself) and the
// systemd unit it ends in. A unit name is kept as systemd spells it,
// escapes included ("system-getty.slice/getty\x2dtty1.service" is the unit
// "getty\x2dtty1.service"), since that is the name `systemctl status` takes.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace iowatch::collectors {

// The last component when it names a unit (.service, .scope, .slice,
// .socket, .mount, .swap), else "".
std::string UnitOf(std::string_view cgroup_path);

// Components of a relative cgroup path: "" -> 0, "a/b" -> 2.
size_t CgroupDepth(std::string_view cgroup_path);

}  // namespace iowatch::collectors
