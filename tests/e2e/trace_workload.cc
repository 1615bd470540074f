// The programs e2e.trace runs under `iowatch trace`, built with
// _FORTIFY_SOURCE=2 so that reads into fixed buffers go through __read_chk
// and __pread_chk as in Debian's packages.
//   shape FILE REQUEST COUNT   the workload: COUNT writes of REQUEST
//                              bytes, fsync, close; reopen, read forward,
//                              then backward (lseek + read) — MIO's example
//   threads FILE THREADS COUNT one descriptor, THREADS threads, each COUNT
//                              4 KiB pwrites then COUNT preads of its region
//   fork FILE                  10 writes in the parent, then a child that
//                              reads them back (its own report), dup'd
//   loop FILE COUNT            COUNT 4 KiB reads of a cached 1 MiB file,
//                              lseek to 0 at its end; prints ns per read
// and the hostile programs of trace_workload_hostile.cc.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

char g_buffer[8 << 20];  // static: its size is known to _FORTIFY_SOURCE

[[noreturn]] void Die(const char* what) {
  std::perror(what);
  std::exit(1);
}

void WriteFull(int fd, size_t n) {
  if (write(fd, g_buffer, n) != static_cast<ssize_t>(n)) Die("write");
}

void ReadFull(int fd, size_t n) {
  if (read(fd, g_buffer, n) != static_cast<ssize_t>(n)) Die("read");
}

int Shape(const char* path, size_t request, int count) {
  if (request > sizeof g_buffer) Die("request too large");
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) Die("open");
  for (int i = 0; i < count; ++i) WriteFull(fd, request);
  if (fsync(fd) != 0) Die("fsync");
  close(fd);
  fd = open(path, O_RDONLY);
  if (fd < 0) Die("open");
  for (int i = 0; i < count; ++i) ReadFull(fd, request);
  for (int i = count - 1; i >= 0; --i) {
    if (lseek(fd, static_cast<off_t>(i) * static_cast<off_t>(request), SEEK_SET) < 0) Die("lseek");
    ReadFull(fd, request);
  }
  close(fd);
  return 0;
}

int Threads(const char* path, int threads, int count) {
  const int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) Die("open");
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([fd, t, count] {
      char block[4096] = {};
      for (int i = 0; i < count; ++i) {
        const off_t at = (static_cast<off_t>(t) * count + i) * 4096;
        if (pwrite(fd, block, sizeof block, at) != 4096) Die("pwrite");
      }
      for (int i = 0; i < count; ++i) {
        const off_t at = (static_cast<off_t>(t) * count + i) * 4096;
        if (pread(fd, block, sizeof block, at) != 4096) Die("pread");
      }
    });
  }
  for (std::thread& w : workers) w.join();
  close(fd);
  return 0;
}

int Fork(const char* path) {
  const int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) Die("open");
  for (int i = 0; i < 10; ++i) WriteFull(fd, 1000);
  const pid_t child = fork();
  if (child == 0) {
    const int copy = dup(fd);  // the child reads through a duplicate
    if (lseek(copy, 0, SEEK_SET) != 0) Die("lseek");
    for (int i = 0; i < 5; ++i) ReadFull(copy, 2000);
    close(copy);
    close(fd);
    std::exit(0);  // exit, not _exit: the library reports at exit
  }
  int status = 0;
  waitpid(child, &status, 0);
  close(fd);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int Loop(const char* path, long count) {
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) Die("open");
  WriteFull(fd, 1 << 20);
  if (lseek(fd, 0, SEEK_SET) != 0) Die("lseek");
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < count; ++i) {
    if ((i & 255) == 0 && lseek(fd, 0, SEEK_SET) != 0) Die("lseek");
    ReadFull(fd, 4096);
  }
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.1f\n", ns / static_cast<double>(count));
  close(fd);
  return 0;
}

}  // namespace

int RunHostileMode(int argc, char** argv);  // trace_workload_hostile.cc

int main(int argc, char** argv) {
  if (const int status = RunHostileMode(argc, argv); status >= 0) return status;
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "shape" && argc == 5)
    return Shape(argv[2], std::strtoul(argv[3], nullptr, 10), std::atoi(argv[4]));
  if (mode == "threads" && argc == 5)
    return Threads(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  if (mode == "fork" && argc == 3) return Fork(argv[2]);
  if (mode == "loop" && argc == 4) return Loop(argv[2], std::atol(argv[3]));
  std::fprintf(stderr,
               "usage: trace_workload shape FILE REQUEST COUNT | threads FILE THREADS COUNT | "
               "fork FILE | loop FILE COUNT | the modes of trace_workload_hostile.cc\n");
  return 2;
}
