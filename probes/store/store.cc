// Store: opening the database (file mode, pragmas, migrations) and retention.
// Runs are in store_runs.cc, baselines in store_baselines.cc.
#include "probes/store/store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <utility>

#include "common/file_tree.h"
#include "probes/store/store_schema.h"
#include "probes/store/store_sqlite.h"

namespace iowatch::probes {

using internal::Connection;

namespace {

// Per connection, not stored in the file. busy_timeout first, so that even
// switching to WAL waits for a writer in another process instead of failing
// with SQLITE_BUSY. The page cache is bounded well below SQLite's default
// (2 MiB per connection): the daemon appends runs and reads one job's
// baseline at a time, and with the default the resident size grew by a MiB
// over the soak's first half hour as the cache filled.
Status ApplyConnectionSettings(Connection& connection) {
  Status set = connection.Exec(fmt::format("PRAGMA busy_timeout = {}", Store::kBusyTimeout.count()),
                               "setting the busy timeout");
  if (set) {
    set = connection.Exec(fmt::format("PRAGMA cache_size = -{}", Store::kPageCacheKiB),
                          "bounding the page cache");
  }
  return set;
}

constexpr std::string_view kNotRegular = "cannot use the database";

// Refuses the database unless `fd` is a regular file, then its -wal and -shm
// if they exist: SQLite opens all three, and would wait forever on a FIFO
// (`sweep --list` and `baseline list` hung on one) or read a device.
Status CheckStoreFiles(int fd, const std::string& file) {
  Status regular = CheckRegularFile(fd, kNotRegular, file);
  ::close(fd);
  for (const char* suffix : {"-wal", "-shm"}) {
    if (!regular) break;
    const std::string side = file + suffix;
    const int side_fd = ::open(side.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (side_fd < 0) continue;  // absent, or SQLite's to report
    regular = CheckRegularFile(side_fd, kNotRegular, side);
    ::close(side_fd);
  }
  return regular;
}

}  // namespace

Store::Store(std::unique_ptr<Connection> connection) : connection_(std::move(connection)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

const std::string& Store::Path() const { return connection_->Path(); }

Result<Store> Store::OpenInStateDir(const std::filesystem::path& state_dir) {
  return Open(state_dir / kFileName);
}

Result<std::filesystem::path> Store::Quarantine(const std::filesystem::path& path,
                                                int64_t unix_seconds) {
  const auto seconds = static_cast<time_t>(unix_seconds);
  std::tm utc{};
  char stamp[32];
  // The Unix seconds themselves for a year that does not fit an int.
  const bool dated = gmtime_r(&seconds, &utc) != nullptr &&
                     std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc) > 0;
  std::filesystem::path moved =
      path.string() + ".corrupt-" + (dated ? std::string(stamp) : std::to_string(unix_seconds));
  if (::rename(path.c_str(), moved.c_str()) != 0) {
    return ErrnoError(errno, "cannot move the damaged store aside", path.string());
  }
  for (const char* suffix : {"-wal", "-shm"}) {
    const std::string from = path.string() + suffix;
    if (::rename(from.c_str(), (moved.string() + suffix).c_str()) != 0 && errno != ENOENT) {
      return ErrnoError(errno, "cannot move the damaged store's side file aside", from);
    }
  }
  return moved;
}

bool Store::IsDamagedStore(const Error& error) {
  // internal::ToErrorCode maps exactly SQLITE_NOTADB and SQLITE_CORRUPT to
  // kParse; CheckFile says kParse of a truncated file.
  return error.code == ErrorCode::kParse;
}

Result<Store> Store::OpenReadOnly(const std::filesystem::path& path) {
  const std::string file = path.string();
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer.
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return ErrnoError(errno, "cannot open the database", file);
  if (Status regular = CheckStoreFiles(fd, file); !regular) {
    return ErrorOf(std::move(regular));
  }
  Result<internal::Connection> opened =
      internal::Connection::Open(file, internal::Connection::Access::kReadOnly);
  if (!opened) return ErrorOf(opened);
  auto connection = std::make_unique<internal::Connection>(std::move(*opened));
  Status set = ApplyConnectionSettings(*connection);
  if (set) set = internal::CheckCurrentSchema(*connection, internal::StoreMigrations());
  if (!set) return ErrorOf(set);
  return Store(std::move(connection));
}

Result<Store> Store::Open(const std::filesystem::path& path) {
  const std::string file = path.string();
  const std::filesystem::path parent = path.parent_path().empty() ? "." : path.parent_path();
  // Checked here because SQLite would only say "unable to open database
  // file"; the state directory is the operator's to create (systemd's
  // StateDirectory=), so a missing one is reported, not made.
  struct stat info {};
  if (::stat(parent.c_str(), &info) != 0) {
    return ErrnoError(errno, "cannot use the state directory", parent.string());
  }
  if (!S_ISDIR(info.st_mode)) {
    return MakeError(ErrorCode::kInvalidArgument, "the state directory is not a directory",
                     parent.string());
  }
  // Created here rather than by SQLite, which would use 0644 & ~umask: runs
  // name devices and paths that are nobody else's business. SQLite gives the
  // -wal and -shm files the main file's mode.
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd < 0) return ErrnoError(errno, "cannot create or open the database", file);
  if (Status regular = CheckStoreFiles(fd, file); !regular) {
    return ErrorOf(std::move(regular));
  }

  Result<Connection> opened = Connection::Open(file);
  if (!opened) return ErrorOf(opened);
  // On the heap before any Statement exists: statements keep its address.
  auto connection = std::make_unique<Connection>(std::move(*opened));

  Status set = ApplyConnectionSettings(*connection);
  if (set) set = connection->Exec("PRAGMA foreign_keys = ON", "enabling foreign keys");
  // Before WAL mode (which is written into the file) or any migration.
  if (set) set = internal::CheckOwnSchema(*connection, internal::StoreMigrations());
  if (!set) return ErrorOf(set);
  // Persistent in the file; answers the mode now in effect. A file system
  // without shared memory for the -shm file (some network file systems)
  // answers "delete", and we would rather say so than run without WAL.
  Result<std::string> mode =
      connection->QueryText("PRAGMA journal_mode = WAL", "switching to WAL mode");
  if (!mode) return ErrorOf(mode);
  if (*mode != "wal") {
    return MakeError(ErrorCode::kUnsupported,
                     fmt::format("cannot use WAL mode here (SQLite kept journal_mode={})", *mode),
                     file);
  }
  // Per connection, not stored in the file: see the header for why FULL.
  set = connection->Exec("PRAGMA synchronous = FULL", "setting synchronous=FULL");
  if (!set) return ErrorOf(set);

  Status migrated = internal::Migrate(*connection, internal::StoreMigrations());
  if (!migrated) return ErrorOf(migrated);
  return Store(std::move(connection));
}

Result<int64_t> Store::PruneRunsBefore(int64_t unix_ms) {
  // One statement, hence one transaction; the cascades take the runs'
  // run_ops and run_metrics rows with them.
  Result<internal::Statement> prune = connection_->Prepare(
      "DELETE FROM runs WHERE start_unix_ms < ?1 "
      "AND id NOT IN (SELECT run_id FROM baseline_runs)",
      "pruning old runs");
  if (!prune) return ErrorOf(prune);
  prune->Bind(1, unix_ms);
  if (Status done = prune->Run(); !done) return ErrorOf(done);
  return connection_->Changes();
}

Result<std::optional<int64_t>> Store::NewestRunStartMs() const {
  Result<internal::Statement> newest =
      connection_->Prepare("SELECT MAX(start_unix_ms) FROM runs", "finding the newest run");
  if (!newest) return ErrorOf(newest);
  Result<bool> row = newest->Step();
  if (!row) return ErrorOf(row);
  if (!*row || newest->IsNull(0)) return std::optional<int64_t>();
  return std::optional<int64_t>(newest->Int(0));
}

Status Store::CheckFile() const {
  const std::string& file = Path();
  // SQLite's own answer, about the descriptor it writes through.
  const Result<bool> moved = connection_->FileHasMoved();
  if (!moved) return ErrorOf(moved);
  struct stat info {};
  const bool there = ::stat(file.c_str(), &info) == 0;
  const int stat_errno = errno;
  if (*moved) {
    if (!there && stat_errno == ENOENT) {
      return MakeError(ErrorCode::kNotFound,
                       "was removed while open (what SQLite writes now would be lost with it)",
                       file);
    }
    return MakeError(ErrorCode::kIo, "was replaced by another file while open", file);
  }
  if (!there) return ErrnoError(stat_errno, "cannot check the database file", file);
  // A database is whole pages, page 1 always on disk: SQLite never leaves
  // it shorter (the store never vacuums; a VACUUM shrinks it by whole pages).
  Result<int64_t> page = connection_->QueryInt("PRAGMA page_size", "reading the page size");
  if (!page) return ErrorOf(page);
  if (info.st_size < *page || info.st_size % *page != 0) {
    return MakeError(ErrorCode::kParse,
                     fmt::format("was truncated while open to {} bytes (a database is whole "
                                 "pages of {} bytes)",
                                 info.st_size, *page),
                     file);
  }
  return {};
}

}  // namespace iowatch::probes
