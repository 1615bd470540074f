// A thin RAII layer over SQLite's C API for the probe store: a connection,
// prepared statements with typed binds and columns, an IMMEDIATE transaction
// that rolls back unless committed, and the one place that turns a SQLite
// result code into an Error. Every Error names the database file (path) and
// carries SQLite's own words and code name, e.g.
//   /var/lib/iowatch/iowatch.db: adding run: database or disk is full (SQLITE_FULL)
// Internal to the store; nothing outside probes/store*.cc includes it, so
// <sqlite3.h> stays out of the rest of the build.
// Thread-safety: a Connection and its Statements belong to one thread at a
// time (the connection is opened with SQLITE_OPEN_NOMUTEX).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace iowatch::probes::internal {

// "SQLITE_FULL", "SQLITE_BUSY", ... for a (possibly extended) result code.
std::string_view SqliteCodeName(int rc);

class Connection;

class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  // 1-based, as SQLite's. A failed bind (only possible through misuse) is
  // remembered and reported by the next Step.
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view text);
  Statement& BindBlob(int index, std::span<const uint8_t> bytes);  // NULL when empty
  Statement& BindNull(int index);

  // true: a row is ready; false: done.
  Result<bool> Step();
  // Steps to the end, for statements that return no rows.
  Status Run();
  // Steps to the end, calling `row` for each row; the first error (SQLite's
  // or the callback's) stops it and is returned.
  Status ForEachRow(const std::function<Status(const Statement&)>& row);
  // Ready to run again with new bindings (one prepare for many inserts).
  void Reset();

  // 0-based, as SQLite's. NULL reads as 0, "" or an empty blob.
  bool IsNull(int column) const;
  int64_t Int(int column) const;
  double Real(int column) const;
  std::string Text(int column) const;
  std::span<const uint8_t> Blob(int column) const;  // valid until the next Step

 private:
  friend class Connection;
  Statement(const Connection& connection, sqlite3_stmt* statement, std::string_view what);
  void NoteBind(int rc);

  const Connection* connection_;
  sqlite3_stmt* statement_;
  std::string what_;  // what the statement is for, to prefix its errors
  int bind_rc_ = 0;
};

class Connection {
 public:
  enum class Access { kReadWrite, kReadOnly };
  // Opens an existing database file (SQLite does not create it: the store
  // creates the file itself, with mode 0600).
  static Result<Connection> Open(const std::string& path, Access access = Access::kReadWrite);

  Connection(Connection&&) noexcept = default;
  Connection& operator=(Connection&&) noexcept = default;
  ~Connection();

  const std::string& Path() const { return path_; }
  sqlite3* Handle() const { return db_.get(); }

  // Runs one or more statements that return no rows we need.
  Status Exec(std::string_view sql, std::string_view what) const;
  Result<Statement> Prepare(std::string_view sql, std::string_view what) const;
  // The first column of the first row, for PRAGMA queries.
  Result<std::string> QueryText(std::string_view sql, std::string_view what) const;
  Result<int64_t> QueryInt(std::string_view sql, std::string_view what) const;
  // Whether the main database file was removed or renamed since it was
  // opened: its path no longer names the inode SQLite writes to
  // (SQLITE_FCNTL_HAS_MOVED).
  Result<bool> FileHasMoved() const;
  int64_t LastInsertId() const;
  int64_t Changes() const;  // rows changed by the last statement, cascades excluded

  // The Error for result code `rc` from this connection.
  std::unexpected<Error> Fail(int rc, std::string_view what) const;

 private:
  struct Closer {
    void operator()(sqlite3* db) const noexcept;
  };
  Connection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;
};

// A write transaction (BEGIN IMMEDIATE) takes the write lock up front, so a
// writer waits (up to the busy timeout) at the start instead of failing with
// SQLITE_BUSY halfway through when another process holds the lock. A read
// transaction (BEGIN) gives several SELECTs one snapshot, so a run is never
// read half-pruned. Rolled back when destroyed uncommitted, including after
// SQLite already rolled it back itself (it does so on SQLITE_FULL and some
// I/O errors); a read transaction needs no Commit.
class Transaction {
 public:
  enum class Kind { kWrite, kRead };
  static Result<Transaction> Begin(const Connection& connection, std::string_view what,
                                   Kind kind = Kind::kWrite);
  Transaction(Transaction&& other) noexcept
      : connection_(std::exchange(other.connection_, nullptr)), what_(std::move(other.what_)) {}
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  Status Commit();

 private:
  Transaction(const Connection& connection, std::string_view what)
      : connection_(&connection), what_(what) {}
  const Connection* connection_;  // null once committed or moved from
  std::string what_;
};

}  // namespace iowatch::probes::internal
