"""A FUSE file system whose files never answer a read (python3 stdlib only, root).

StuckFuse(mountpoint, names) mounts, at `mountpoint`, a directory holding the regular files
`names`: lookups, attributes and opens are answered, a read never is (nor, with
stuck_statfs=True, a statfs: a stale NFS mount as df and the filesystem collector meet it), so whatever reads one
blocks in the kernel until the file system goes away, as a reader of a dying device's sysfs
attribute or a hung NFS mount does. It speaks the kernel's FUSE protocol on /dev/fuse itself
(include/uapi/linux/fuse.h): INIT, LOOKUP, GETATTR, OPEN, READ (kept, never answered),
RELEASE/FLUSH, everything else ENOSYS. close() answers the pending reads with EIO (the
blocked readers return), unmounts (lazily) and aborts the connection (fusectl), so the
server thread ends too.
"""
import ctypes
import errno
import os
import stat
import struct
import subprocess
import threading

_libc = ctypes.CDLL(None, use_errno=True)
_IN_HEADER = struct.Struct("<IIQQIIIHH")  # len opcode unique nodeid uid gid pid extlen pad
_OUT_HEADER = struct.Struct("<IiQ")       # len error unique
_ATTR = struct.Struct("<QQQQQQIIIIIIIIII")  # ino size blocks a/m/ctime, nsecs, mode nlink uid gid rdev blksize flags
LOOKUP, FORGET, GETATTR, OPEN, READ, STATFS, RELEASE, FLUSH, INIT = 1, 2, 3, 14, 15, 17, 18, 25, 26
BATCH_FORGET, INTERRUPT = 42, 36
MS_NOSUID, MS_NODEV = 2, 4


def _process_of(tid):
    """The process a thread (FUSE names the caller's thread) belongs to and that process's
    parent, (Tgid, PPid); (None, None) once gone."""
    fields = {}
    try:
        with open(f"/proc/{tid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("Tgid", "PPid"):
                    fields[key] = int(value.split()[0])
    except OSError:
        pass
    return fields.get("Tgid"), fields.get("PPid")


class StuckFuse:
    def __init__(self, mountpoint, names, stuck_statfs=False):
        self.mountpoint = mountpoint
        self.nodes = {name.encode(): 2 + i for i, name in enumerate(names)}
        self.stuck_statfs = stuck_statfs
        self.reads = 0  # reads received and left unanswered
        self.statfs_calls = 0  # statfs requests received (left unanswered with stuck_statfs)
        self.statfs_callers = []  # the process (thread group) of each
        self.pending = []  # their request ids
        self.fd = os.open("/dev/fuse", os.O_RDWR)
        os.makedirs(mountpoint, exist_ok=True)
        options = f"fd={self.fd},rootmode=40000,user_id=0,group_id=0".encode()
        if _libc.mount(b"iowatch-stuck", mountpoint.encode(), b"fuse", MS_NOSUID | MS_NODEV,
                       options) != 0:
            err = ctypes.get_errno()
            os.close(self.fd)
            raise OSError(err, f"mount fuse at {mountpoint}: {os.strerror(err)}")
        self.closed = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        # After the server runs: stat() of the root is a request it answers.
        self.connection = os.minor(os.stat(mountpoint).st_dev)  # /sys/fs/fuse/connections/N

    def _attr(self, node):
        if node == 1:
            return _ATTR.pack(1, 0, 0, 0, 0, 0, 0, 0, 0, stat.S_IFDIR | 0o755, 2, 0, 0, 0, 4096, 0)
        return _ATTR.pack(node, 4096, 8, 0, 0, 0, 0, 0, 0, stat.S_IFREG | 0o444, 1, 0, 0, 0, 4096, 0)

    def _reply(self, unique, payload=b"", error=0):
        try:
            os.write(self.fd, _OUT_HEADER.pack(_OUT_HEADER.size + len(payload), -error, unique)
                     + payload)
        except OSError:
            pass  # the request was interrupted, or the file system is going away

    def _serve(self):
        while not self.closed:
            try:
                request = os.read(self.fd, 1 << 20 | 4096)
            except OSError:
                return  # unmounted or closed
            _, opcode, unique, node, _, _, pid, *_ = _IN_HEADER.unpack_from(request)
            body = request[_IN_HEADER.size:]
            if opcode == INIT:
                major, minor = struct.unpack_from("<II", body)
                # major minor max_readahead flags max_background congestion max_write time_gran
                # max_pages map_alignment flags2, then reserved words: 64 bytes in all.
                out = struct.pack("<IIIIHHIIHHI", 7, min(minor, 31), 0, 0, 16, 12, 4096, 1, 1, 0, 0)
                self._reply(unique, out.ljust(64, b"\0"))
            elif opcode == LOOKUP:
                child = self.nodes.get(body.rstrip(b"\0"))
                if child is None:
                    self._reply(unique, error=errno.ENOENT)
                else:
                    self._reply(unique, struct.pack("<QQQQII", child, 0, 0, 0, 0, 0)
                                + self._attr(child))
            elif opcode == GETATTR:
                self._reply(unique, struct.pack("<QII", 0, 0, 0) + self._attr(node))
            elif opcode == OPEN:
                self._reply(unique, struct.pack("<QII", 0, 0, 0))
            elif opcode == READ:
                self.reads += 1  # never answered
                self.pending.append(unique)
            elif opcode == STATFS and self.stuck_statfs:
                self.statfs_calls += 1  # never answered
                self.statfs_callers.append(_process_of(pid))
                self.pending.append(unique)
            elif opcode in (RELEASE, FLUSH):
                self._reply(unique)
            elif opcode in (FORGET, BATCH_FORGET, INTERRUPT):
                pass  # no reply expected
            else:
                self._reply(unique, error=errno.ENOSYS)

    def close(self):
        if self.closed:
            return
        self.closed = True
        for unique in self.pending:
            self._reply(unique, error=errno.EIO)
        subprocess.run(["umount", "-l", self.mountpoint], check=False, capture_output=True)
        abort = f"/sys/fs/fuse/connections/{self.connection}/abort"
        try:
            with open(abort, "w") as f:  # ends the server thread's read of /dev/fuse
                f.write("1")
        except OSError:
            pass  # no fusectl: the thread is a daemon thread and ends with the process
        self.thread.join(5)
        os.close(self.fd)
