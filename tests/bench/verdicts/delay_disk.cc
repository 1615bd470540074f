// A disk with a service time the caller holds: one file, "disk", in memory,
// served over FUSE (the kernel's /dev/fuse protocol, no libfuse) with every
// read and write completing a set time after it arrived, as null_blk's
// completion_nsec does (this VM's kernel has neither null_blk, scsi_debug,
// dm-delay, ublk nor NBD). A loop device on the file is a disk whose
// service time does not wander with the host's own disk: record.py's
// --slowdown=held steps it by a known factor and holds it.
//
//   delay_disk MOUNTPOINT --size-mib=N [--base-us=U] [--per-kib-us=K]
//              [--threads=T] [--slow-factor=F]
//
// Each request's service time is (U + K x KiB) x factor, counted from the
// moment a server thread read it; T threads serve requests at once (a
// device's parallelism). SIGUSR1 sets the factor to F, SIGUSR2 back to 1,
// each answered with "factor X" on stdout once in force (a caller that waits
// for it measures no request of the old factor); SIGTERM or SIGINT unmounts
// (lazily) and exits. Prints "ready" once mounted.
// The file is opened with FOPEN_DIRECT_IO: no page cache between the loop
// device and the server, so each of the loop's reads and writes is served.
// Root only (mount).
#include <fcntl.h>
#include <linux/fuse.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

constexpr uint64_t kRootId = FUSE_ROOT_ID;
constexpr uint64_t kDiskId = 2;
constexpr std::string_view kDiskName = "disk";
constexpr uint32_t kMaxWrite = 1u << 20;
constexpr uint16_t kMaxPages = kMaxWrite / 4096;
constexpr size_t kBufferSize = kMaxWrite + 64 * 1024;
constexpr uint64_t kValidSeconds = 3600;
// The last stretch of a wait is spun, not slept: a VM's timer wakes tens of
// microseconds late, which would be the disk's scatter.
constexpr int64_t kSpinNs = 60'000;

struct Options {
  std::string mountpoint;
  uint64_t size_bytes = 0;
  double base_us = 400;
  double per_kib_us = 2;
  int threads = 4;
  double slow_factor = 1.4;
};

std::atomic<uint32_t> g_factor_permille{1000};  // set by the main thread, read by the servers
std::atomic<bool> g_stop{false};

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void WaitUntil(int64_t deadline_ns) {
  const int64_t sleep_to = deadline_ns - kSpinNs;
  if (NowNs() < sleep_to) {
    timespec ts{.tv_sec = sleep_to / 1'000'000'000, .tv_nsec = sleep_to % 1'000'000'000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
  }
  while (NowNs() < deadline_ns) {
  }
}

class Server {
 public:
  Server(int fd, const Options& options, char* data) : fd_(fd), options_(options), data_(data) {}

  // One thread's loop: read a request, answer it; returns when unmounted.
  void Serve() {
    std::vector<char> buffer(kBufferSize);
    while (!g_stop.load()) {
      const ssize_t n = read(fd_, buffer.data(), buffer.size());
      const int64_t arrived = NowNs();
      if (n < 0) {
        if (errno == EINTR || errno == ENOENT || errno == EAGAIN) continue;
        if (errno != ENODEV) std::perror("delay_disk: read /dev/fuse");
        g_stop = true;
        return;
      }
      if (static_cast<size_t>(n) < sizeof(fuse_in_header)) continue;
      const auto* in = reinterpret_cast<const fuse_in_header*>(buffer.data());
      Handle(*in, buffer.data() + sizeof(fuse_in_header), arrived);
    }
  }

 private:
  void Handle(const fuse_in_header& in, const char* body, int64_t arrived) {
    switch (in.opcode) {
      case FUSE_INIT:
        return Init(in, *reinterpret_cast<const fuse_init_in*>(body));
      case FUSE_LOOKUP:
        return Lookup(in, body);
      case FUSE_GETATTR:
      case FUSE_SETATTR:
        return Attr(in);
      case FUSE_OPEN:
      case FUSE_OPENDIR:
        return Open(in);
      case FUSE_READ:
        return Read(in, *reinterpret_cast<const fuse_read_in*>(body), arrived);
      case FUSE_WRITE:
        return Write(in, *reinterpret_cast<const fuse_write_in*>(body),
                     body + sizeof(fuse_write_in), arrived);
      case FUSE_STATFS:
        return Statfs(in);
      case FUSE_READDIR:
      case FUSE_RELEASE:
      case FUSE_RELEASEDIR:
      case FUSE_FLUSH:
      case FUSE_FSYNC:
      case FUSE_FSYNCDIR:
      case FUSE_ACCESS:
        return Reply(in, 0, nullptr, 0);
      case FUSE_FORGET:
      case FUSE_BATCH_FORGET:
      case FUSE_INTERRUPT:
        return;  // no answer is expected
      case FUSE_DESTROY:
        g_stop = true;
        return Reply(in, 0, nullptr, 0);
      default:
        return Reply(in, -ENOSYS, nullptr, 0);
    }
  }

  void Reply(const fuse_in_header& in, int error, const void* payload, size_t size) {
    fuse_out_header out{.len = static_cast<uint32_t>(sizeof(fuse_out_header) + size),
                        .error = error,
                        .unique = in.unique};
    iovec parts[2] = {{&out, sizeof out}, {const_cast<void*>(payload), size}};
    if (writev(fd_, parts, size ? 2 : 1) < 0 && errno != ENOENT) {
      std::perror("delay_disk: write /dev/fuse");
    }
  }

  void Init(const fuse_in_header& in, const fuse_init_in& init) {
    fuse_init_out out{};
    out.major = FUSE_KERNEL_VERSION;
    out.minor = std::min<uint32_t>(init.minor, FUSE_KERNEL_MINOR_VERSION);
    out.max_readahead = init.max_readahead;
    out.flags = init.flags & (FUSE_ASYNC_READ | FUSE_BIG_WRITES | FUSE_MAX_PAGES | FUSE_ASYNC_DIO);
    out.max_background = 64;
    out.congestion_threshold = 48;
    out.max_write = kMaxWrite;
    out.time_gran = 1;
    out.max_pages = kMaxPages;
    Reply(in, 0, &out, sizeof out);
  }

  fuse_attr AttrOf(uint64_t id) const {
    fuse_attr attr{};
    attr.ino = id;
    attr.blksize = 4096;
    if (id == kRootId) {
      attr.mode = S_IFDIR | 0755;
      attr.nlink = 2;
    } else {
      attr.mode = S_IFREG | 0600;
      attr.nlink = 1;
      attr.size = options_.size_bytes;
      attr.blocks = options_.size_bytes / 512;
    }
    return attr;
  }

  void Lookup(const fuse_in_header& in, const char* name) {
    if (in.nodeid != kRootId || std::string_view(name) != kDiskName) {
      return Reply(in, -ENOENT, nullptr, 0);
    }
    fuse_entry_out out{};
    out.nodeid = kDiskId;
    out.entry_valid = out.attr_valid = kValidSeconds;
    out.attr = AttrOf(kDiskId);
    Reply(in, 0, &out, sizeof out);
  }

  void Attr(const fuse_in_header& in) {
    if (in.nodeid != kRootId && in.nodeid != kDiskId) return Reply(in, -ENOENT, nullptr, 0);
    fuse_attr_out out{};
    out.attr_valid = kValidSeconds;
    out.attr = AttrOf(in.nodeid);
    Reply(in, 0, &out, sizeof out);
  }

  void Open(const fuse_in_header& in) {
    fuse_open_out out{};
    out.open_flags = in.nodeid == kDiskId ? FOPEN_DIRECT_IO : 0;
    Reply(in, 0, &out, sizeof out);
  }

  void Statfs(const fuse_in_header& in) {
    fuse_statfs_out out{};
    out.st.bsize = out.st.frsize = 4096;
    out.st.blocks = options_.size_bytes / 4096;
    out.st.namelen = 255;
    Reply(in, 0, &out, sizeof out);
  }

  // The bytes of [offset, offset + size) that lie inside the file.
  size_t Inside(uint64_t offset, size_t size) const {
    if (offset >= options_.size_bytes) return 0;
    return std::min<uint64_t>(size, options_.size_bytes - offset);
  }

  int64_t Deadline(int64_t arrived, size_t bytes) const {
    const double us =
        (options_.base_us + options_.per_kib_us * static_cast<double>(bytes) / 1024.0) *
        g_factor_permille.load() / 1000.0;
    return arrived + static_cast<int64_t>(us * 1000);
  }

  void Read(const fuse_in_header& in, const fuse_read_in& read, int64_t arrived) {
    const size_t bytes = Inside(read.offset, read.size);
    WaitUntil(Deadline(arrived, read.size));
    Reply(in, 0, data_ + read.offset, bytes);
  }

  void Write(const fuse_in_header& in, const fuse_write_in& write, const char* payload,
             int64_t arrived) {
    const size_t bytes = Inside(write.offset, write.size);
    if (bytes < write.size) return Reply(in, -ENOSPC, nullptr, 0);
    std::memcpy(data_ + write.offset, payload, bytes);
    WaitUntil(Deadline(arrived, write.size));
    fuse_write_out out{.size = static_cast<uint32_t>(bytes), .padding = 0};
    Reply(in, 0, &out, sizeof out);
  }

  int fd_;
  const Options& options_;
  char* data_;
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "delay_disk: %s\nusage: delay_disk MOUNTPOINT --size-mib=N [--base-us=U] "
               "[--per-kib-us=K] [--threads=T] [--slow-factor=F]\n",
               why.c_str());
  std::exit(2);
}

double Number(std::string_view arg, std::string_view key) {
  const std::string text(arg.substr(key.size()));
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || value < 0) {
    Usage(std::string(key) + " expects a number >= 0, got \"" + text + "\"");
  }
  return value;
}

Options Parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto is = [&](std::string_view key) { return arg.starts_with(key); };
    if (is("--size-mib=")) {
      options.size_bytes = static_cast<uint64_t>(Number(arg, "--size-mib=")) << 20;
    } else if (is("--base-us=")) {
      options.base_us = Number(arg, "--base-us=");
    } else if (is("--per-kib-us=")) {
      options.per_kib_us = Number(arg, "--per-kib-us=");
    } else if (is("--threads=")) {
      options.threads = static_cast<int>(Number(arg, "--threads="));
    } else if (is("--slow-factor=")) {
      options.slow_factor = Number(arg, "--slow-factor=");
    } else if (!arg.starts_with("--") && options.mountpoint.empty()) {
      options.mountpoint = arg;
    } else {
      Usage("unknown argument \"" + std::string(arg) + "\"");
    }
  }
  if (options.mountpoint.empty()) Usage("no MOUNTPOINT");
  if (options.size_bytes == 0) Usage("--size-mib must be given and > 0");
  if (options.threads < 1) Usage("--threads must be >= 1");
  return options;
}

constexpr const char* kFusectl = "/sys/fs/fuse/connections";

// The connection's abort file under fusectl, named by the mount's device
// minor; asked once the threads serve (stat asks the server). *mounted:
// fusectl was not mounted, and this mounted it (to be unmounted at the end).
std::string AbortFileOf(const std::string& mountpoint, bool* mounted) {
  struct stat st {};
  if (stat(mountpoint.c_str(), &st) != 0) return {};
  *mounted = access(kFusectl, F_OK) == 0 &&
             mount("fusectl", kFusectl, "fusectl", 0, nullptr) == 0;  // EBUSY if there
  return std::string(kFusectl) + "/" + std::to_string(minor(st.st_dev)) + "/abort";
}

void Abort(const std::string& abort_file) {
  const int fd = abort_file.empty() ? -1 : open(abort_file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return;  // the unmount ended the connection: no user was left
  if (fd < 0 || write(fd, "1", 1) != 1) {
    std::fprintf(stderr, "delay_disk: cannot abort the connection (%s): %s\n", abort_file.c_str(),
                 std::strerror(errno));
    std::_Exit(1);  // the threads may be blocked in read for good
  }
  close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = Parse(argc, argv);
  const auto slow_permille = static_cast<uint32_t>(options.slow_factor * 1000 + 0.5);
  char* data = static_cast<char*>(mmap(nullptr, options.size_bytes, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
  if (data == MAP_FAILED) {
    std::perror("delay_disk: mmap");
    return 1;
  }
  const int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    std::perror("delay_disk: open /dev/fuse");
    return 1;
  }
  const std::string mount_options =
      "fd=" + std::to_string(fd) + ",rootmode=40000,user_id=0,group_id=0,allow_other";
  if (mount("delay_disk", options.mountpoint.c_str(), "fuse.delay_disk", MS_NOSUID | MS_NODEV,
            mount_options.c_str()) != 0) {
    std::fprintf(stderr, "delay_disk: mount %s: %s\n", options.mountpoint.c_str(),
                 std::strerror(errno));
    return 1;
  }
  // Every signal of ours is taken by the main thread's sigwait, the servers
  // never interrupted: blocked before they start, which they inherit.
  sigset_t handled;
  sigemptyset(&handled);
  for (int s : {SIGTERM, SIGINT, SIGUSR1, SIGUSR2}) sigaddset(&handled, s);
  pthread_sigmask(SIG_BLOCK, &handled, nullptr);
  Server server(fd, options, data);
  std::vector<std::thread> threads;
  for (int i = 0; i < options.threads; ++i) threads.emplace_back([&] { server.Serve(); });
  std::printf("ready\n");
  std::fflush(stdout);
  bool mounted_fusectl = false;
  const std::string abort_file = AbortFileOf(options.mountpoint, &mounted_fusectl);
  for (int signal = 0; sigwait(&handled, &signal) == 0 && signal != SIGTERM && signal != SIGINT;) {
    g_factor_permille = signal == SIGUSR1 ? slow_permille : 1000;
    std::printf("factor %.3f\n", g_factor_permille.load() / 1000.0);
    std::fflush(stdout);
  }
  g_stop = true;
  umount2(options.mountpoint.c_str(), MNT_DETACH);
  // A loop device still on the file keeps the connection up past the unmount:
  // aborting it ends every thread's read (ENODEV) and fails the loop's I/O.
  Abort(abort_file);
  for (auto& thread : threads) thread.join();
  if (mounted_fusectl) umount2(kFusectl, MNT_DETACH);
  return 0;
}
