// trace_workload's programs that do what traced programs do to the library's
// assumptions, each run by e2e.trace_hostile:
//   vfork FILE           10 writes; a vfork child dup2()s the file onto
//                        standard output and closes it (posix_spawn's and
//                        CPython's file actions) then _exits; 10 more writes
//                        and a line on standard output
//   behind FILE          the file opened five times, 100 bytes written each
//                        time; closed behind the tracer (fclose(fdopen()),
//                        syscall(SYS_close), closefrom) and the number reused
//                        by a pipe, a socketpair, an eventfd, fcntl(F_DUPFD),
//                        each carrying traffic; the fifth also written
//                        through fcntl(F_DUPFD_CLOEXEC)'s copy
//   signal-open FILE COUNT  a timer's handler opens and closes FILE while
//                        the main thread allocates (a second thread exists,
//                        so malloc locks its arena), COUNT times
//   signal-fork FILE COUNT  a timer's handler forks (the child _exits) while
//                        the main thread opens and closes FILE, COUNT times
//   signal-fork-nested FILE COUNT  the same while the main thread opens,
//                        reads and closes FILE and forks itself: the
//                        handler's fork lands inside the main thread's,
//                        whose atfork handlers run in the library
//   reopen FILE          one thread opens and closes FILE, another closes
//                        the numbers it gets before it looks at them
//   inflight FULL EMPTY ROUNDS  a thread's 16 MiB pread of FULL in flight
//                        while the main thread closes its number and opens
//                        EMPTY (0 bytes) on it, ROUNDS times
//   exhaust FILE [closefrom]  writes to FILE, then opens it until EMFILE
//                        (its limit lowered to 64) and exits holding every
//                        descriptor; prints how many opens it made;
//                        `closefrom` closes every descriptor from 3 first
//   pipe-race FILE MS    for MS milliseconds threads race on descriptors 3
//                        to 10: two open FILE (100 bytes), pread it and
//                        close it; one closes those numbers; one makes
//                        pipes, writes 1000 bytes into each and reads them
//                        back; one dup2()s a pipe's end onto those numbers
//                        and writes 1000 bytes through it; prints how many
//                        opens of FILE succeeded
//   junk MIB             writes MIB MiB of junk, no newline, into
//                        $IOWATCH_TRACE_OUTPUT
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

[[noreturn]] void Fail(const char* what) {
  std::perror(what);
  std::exit(1);
}

void Write(int fd, size_t n) {
  static char block[4096];
  if (write(fd, block, n) != static_cast<ssize_t>(n)) Fail("write");
}

void Read(int fd, size_t n) {
  char block[4096];
  if (read(fd, block, n) != static_cast<ssize_t>(n)) Fail("read");
}

int Vfork(const char* path) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) Fail("open");
  for (int i = 0; i < 10; ++i) Write(fd, 100);
  const pid_t child = vfork();
  if (child == 0) {
    // In the parent's memory: only what a spawn's file actions do.
    if (dup2(fd, STDOUT_FILENO) < 0) _exit(3);
    close(fd);
    _exit(0);
  }
  if (child < 0) Fail("vfork");
  int status = 0;
  waitpid(child, &status, 0);
  for (int i = 0; i < 10; ++i) Write(fd, 100);
  if (write(STDOUT_FILENO, "vforked\n", 8) != 8) Fail("write stdout");
  close(fd);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// The file opened and written once; the number it got.
int OpenAndWrite(const char* path) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) Fail("open");
  Write(fd, 100);
  return fd;
}

void Expect(int got, int wanted, const char* what) {
  if (got != wanted) {
    std::fprintf(stderr, "%s: got descriptor %d, not %d\n", what, got, wanted);
    std::exit(1);
  }
}

// 1000 bytes from one end to the other, then both closed.
void CarryAndClose(int in, int out) {
  Write(in, 1000);
  Read(out, 1000);
  close(in);
  close(out);
}

// A pipe, a socketpair, an eventfd and fcntl(F_DUPFD) on numbers the
// tracer last saw as the file.
int Behind(const char* path) {
  int fd = OpenAndWrite(path);
  if (std::fclose(fdopen(fd, "a")) != 0) Fail("fclose");
  int p[2];
  if (pipe(p) != 0) Fail("pipe");
  Expect(p[0], fd, "pipe");
  CarryAndClose(p[1], p[0]);

  fd = OpenAndWrite(path);
  if (syscall(SYS_close, fd) != 0) Fail("syscall(SYS_close)");
  int s[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, s) != 0) Fail("socketpair");
  Expect(s[0], fd, "socketpair");
  CarryAndClose(s[0], s[1]);

  fd = OpenAndWrite(path);
  closefrom(fd);
  const int event = eventfd(0, 0);
  Expect(event, fd, "eventfd");
  const uint64_t one = 1;
  if (write(event, &one, sizeof one) != sizeof one) Fail("write eventfd");
  Read(event, 8);
  close(event);

  fd = OpenAndWrite(path);
  if (syscall(SYS_close, fd) != 0) Fail("syscall(SYS_close)");
  int q[2];
  if (pipe(p) != 0 || pipe(q) != 0) Fail("pipe");  // fd, fd + 1; fd + 2, fd + 3
  close(p[0]);
  const int copy = fcntl(q[1], F_DUPFD, fd);
  Expect(copy, fd, "fcntl(F_DUPFD)");
  Write(copy, 1000);
  Read(q[0], 1000);
  close(copy);
  for (int end : {p[1], q[0], q[1]}) close(end);

  fd = OpenAndWrite(path);
  const int dup = fcntl(fd, F_DUPFD_CLOEXEC, 50);
  if (dup < 50) Fail("fcntl(F_DUPFD_CLOEXEC)");
  close(fd);
  Write(dup, 100);
  close(dup);
  return 0;
}

void OnAlarm(void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  if (sigaction(SIGALRM, &action, nullptr) != 0) Fail("sigaction");
}

// SIGALRM in `microseconds`, once.
void Alarm(long microseconds) {
  itimerval timer{};
  timer.it_value.tv_usec = microseconds;
  if (setitimer(ITIMER_REAL, &timer, nullptr) != 0) Fail("setitimer");
}

const char* g_path = nullptr;
std::atomic<int> g_handled{0};

void OpenInHandler(int) {
  const int saved = errno;
  const int fd = open(g_path, O_RDONLY);
  if (fd >= 0) close(fd);
  g_handled.fetch_add(1);
  errno = saved;
}

// A second thread makes glibc's malloc lock its arena; the sizes are beyond
// its per-thread cache, so every call takes the lock.
int SignalOpen(const char* path, int count) {
  g_path = path;
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) Fail("open");
  close(fd);
  sigset_t alarm;
  sigemptyset(&alarm);
  sigaddset(&alarm, SIGALRM);
  pthread_sigmask(SIG_BLOCK, &alarm, nullptr);
  std::atomic<bool> stop{false};
  std::thread idle([&] {
    while (!stop.load()) usleep(1000);
  });
  pthread_sigmask(SIG_UNBLOCK, &alarm, nullptr);
  OnAlarm(OpenInHandler);
  std::vector<void*> blocks(64, nullptr);
  int armed = 0;  // one signal at a time: the loop always gets on
  for (unsigned i = 0; g_handled.load() < count; ++i) {
    if (armed == g_handled.load()) {
      Alarm(100);
      ++armed;
    }
    void*& block = blocks[i % blocks.size()];
    std::free(block);
    block = std::malloc(2048 + (i % 64) * 512);
  }
  for (void* block : blocks) std::free(block);
  stop.store(true);
  idle.join();
  return 0;
}

void ForkInHandler(int) {
  const int saved = errno;
  const pid_t child = fork();
  if (child == 0) _exit(0);
  if (child > 0) (void)waitpid(child, nullptr, 0);
  g_handled.fetch_add(1);
  errno = saved;
}

int SignalFork(const char* path, int count) {
  const int made = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (made < 0) Fail("open");
  close(made);
  OnAlarm(ForkInHandler);
  int armed = 0;  // one signal at a time: the loop always gets on
  while (g_handled.load() < count) {
    if (armed == g_handled.load()) {
      Alarm(100);
      ++armed;
    }
    const int fd = open(path, O_RDONLY);
    if (fd >= 0) close(fd);
  }
  return 0;
}

// Forks of the main thread's own, each with a handler's fork armed to land
// in it (the delays vary so that some land in its atfork handlers).
int SignalForkNested(const char* path, int count) {
  const int made = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (made < 0) Fail("open");
  Write(made, 100);
  close(made);
  OnAlarm(ForkInHandler);
  int armed = 0;
  for (unsigned i = 0; g_handled.load() < count; ++i) {
    if (armed == g_handled.load()) {
      Alarm(20 + (i % 16) * 10);
      ++armed;
    }
    const int fd = open(path, O_RDONLY);
    if (fd >= 0) {
      char block[100];
      if (read(fd, block, sizeof block) < 0) Fail("read");
      close(fd);
    }
    const pid_t child = fork();
    if (child == 0) _exit(0);
    if (child < 0) Fail("fork");
    while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  return 0;
}

// Thread A opens and closes; thread B closes the numbers A gets (a racing
// program's close of a descriptor another thread just opened).
int Reopen(const char* path, int count) {
  const int made = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (made < 0) Fail("open");
  close(made);
  std::atomic<bool> stop{false};
  std::atomic<int> last{-1};
  std::thread closer([&] {
    while (!stop.load()) {
      const int fd = last.load();
      if (fd >= 0) close(fd);
    }
  });
  for (int i = 0; i < count; ++i) {
    const int fd = open(path, O_RDONLY);
    if (fd < 0) continue;
    last.store(fd);
    close(fd);  // EBADF when the other thread was first
  }
  stop.store(true);
  closer.join();
  return 0;
}

// Reads in flight on FULL while the number is closed and given to EMPTY:
// none of FULL's bytes may be counted as EMPTY's. Each round the reader
// starts a 16 MiB pread of FULL (a few milliseconds of copying), and 100 µs
// later, the read well under way, the number is closed and reopened on
// EMPTY; once the read returned, on FULL again.
int Inflight(const char* full, const char* empty, int rounds) {
  constexpr size_t kRead = 16 << 20;
  {
    const int fd = open(full, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) Fail("open");
    for (size_t done = 0; done < kRead; done += 4096) Write(fd, 4096);
    close(fd);
    const int e = open(empty, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (e < 0) Fail("open");
    close(e);
  }
  const int number = open(full, O_RDONLY);
  if (number < 0) Fail("open");
  std::atomic<int> go{0}, started{0}, done{0};
  std::thread reader([&] {
    std::vector<char> buffer(kRead);
    for (int round = 1; round <= rounds; ++round) {
      while (go.load() < round) std::this_thread::yield();
      started.store(round);
      if (pread(number, buffer.data(), buffer.size(), 0) < 0) Fail("pread");
      done.store(round);
    }
  });
  for (int round = 1; round <= rounds; ++round) {
    go.store(round);
    while (started.load() < round) std::this_thread::yield();
    usleep(100);
    close(number);
    if (open(empty, O_RDONLY) != number) Fail("reopen");
    while (done.load() < round) std::this_thread::yield();
    close(number);
    if (open(full, O_RDONLY) != number) Fail("reopen");
  }
  reader.join();
  close(number);
  return 0;
}

int Exhaust(const char* path, bool close_all) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) Fail("open");
  Write(fd, 100);
  close(fd);
  if (close_all) closefrom(3);
  const rlimit limit{64, 64};
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) Fail("setrlimit");
  int opens = 0;
  while (open(path, O_RDONLY) >= 0) ++opens;
  if (errno != EMFILE) Fail("open until EMFILE");
  std::printf("%d\n", opens);
  return std::fflush(stdout) == 0 ? 0 : 1;  // stdout already open: no descriptor needed
}

// Descriptors 3 to 10, raced on by four threads (the header).
int PipeRace(const char* path, int milliseconds) {
  {
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) Fail("open");
    Write(fd, 100);
    close(fd);
  }
  std::signal(SIGPIPE, SIG_IGN);  // a pipe's read end closed under its writer
  constexpr int kFirst = 3, kNumbers = 8;
  std::atomic<bool> stop{false};
  std::atomic<long> opens{0};
  static char block[1000];
  const auto open_and_read = [&] {
    char buffer[100];
    while (!stop.load(std::memory_order_relaxed)) {
      const int fd = open(path, O_RDONLY);
      if (fd < 0) continue;
      opens.fetch_add(1, std::memory_order_relaxed);
      (void)!pread(fd, buffer, sizeof buffer, 0);
      close(fd);
    }
  };
  std::thread opener(open_and_read), second_opener(open_and_read);
  std::thread closer([&] {
    for (unsigned i = 0; !stop.load(std::memory_order_relaxed); ++i) close(kFirst + i % kNumbers);
  });
  std::thread piper([&] {  // non-blocking: an end swapped under it never blocks
    while (!stop.load(std::memory_order_relaxed)) {
      int p[2];
      if (pipe2(p, O_NONBLOCK) != 0) continue;
      (void)!write(p[1], block, sizeof block);
      (void)!read(p[0], block, sizeof block);
      close(p[0]);
      close(p[1]);
    }
  });
  std::thread duper([&] {
    int q[2] = {-1, -1};
    for (unsigned i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      if (i % 64 == 0) {
        close(q[0]);
        close(q[1]);
        if (pipe2(q, O_NONBLOCK) != 0) continue;
      }
      const int number = kFirst + static_cast<int>(i % kNumbers);
      if (dup2(q[1], number) < 0) continue;
      (void)!write(number, block, sizeof block);
      (void)!read(q[0], block, sizeof block);
    }
  });
  usleep(static_cast<useconds_t>(milliseconds) * 1000);
  stop.store(true);
  for (std::thread* t : {&opener, &second_opener, &closer, &piper, &duper}) t->join();
  std::printf("%ld\n", opens.load());
  return std::fflush(stdout) == 0 ? 0 : 1;
}

int Junk(long mebibytes) {
  const char* path = std::getenv("IOWATCH_TRACE_OUTPUT");
  if (path == nullptr) Fail("IOWATCH_TRACE_OUTPUT");
  const int fd = open(path, O_WRONLY | O_APPEND);
  if (fd < 0) Fail("open");
  std::vector<char> junk(1 << 20, 'x');
  for (long i = 0; i < mebibytes; ++i) {
    if (write(fd, junk.data(), junk.size()) != static_cast<ssize_t>(junk.size())) Fail("write");
  }
  close(fd);
  return 0;
}

}  // namespace

// The mode's exit status; -1 when `argv` names none of these.
int RunHostileMode(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "vfork" && argc == 3) return Vfork(argv[2]);
  if (mode == "behind" && argc == 3) return Behind(argv[2]);
  if (mode == "signal-open" && argc == 4) return SignalOpen(argv[2], std::atoi(argv[3]));
  if (mode == "signal-fork" && argc == 4) return SignalFork(argv[2], std::atoi(argv[3]));
  if (mode == "reopen" && argc == 4) return Reopen(argv[2], std::atoi(argv[3]));
  if (mode == "inflight" && argc == 5) return Inflight(argv[2], argv[3], std::atoi(argv[4]));
  if (mode == "signal-fork-nested" && argc == 4) {
    return SignalForkNested(argv[2], std::atoi(argv[3]));
  }
  if (mode == "exhaust" && argc == 3) return Exhaust(argv[2], false);
  if (mode == "exhaust" && argc == 4 && std::strcmp(argv[3], "closefrom") == 0) {
    return Exhaust(argv[2], true);
  }
  if (mode == "pipe-race" && argc == 4) return PipeRace(argv[2], std::atoi(argv[3]));
  if (mode == "junk" && argc == 3) return Junk(std::atol(argv[2]));
  return -1;
}
