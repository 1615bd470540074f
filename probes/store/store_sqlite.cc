#include "probes/store/store_sqlite.h"

#include <sqlite3.h>

#include <array>
#include <cstring>
#include <utility>

namespace iowatch::probes::internal {
namespace {

struct CodeName {
  int code;
  std::string_view name;
};

// Extended codes first: an operator who sees SQLITE_IOERR_FSYNC knows more
// than one who sees SQLITE_IOERR.
constexpr std::array kCodeNames{
    CodeName{SQLITE_IOERR_READ, "SQLITE_IOERR_READ"},
    CodeName{SQLITE_IOERR_SHORT_READ, "SQLITE_IOERR_SHORT_READ"},
    CodeName{SQLITE_IOERR_WRITE, "SQLITE_IOERR_WRITE"},
    CodeName{SQLITE_IOERR_FSYNC, "SQLITE_IOERR_FSYNC"},
    CodeName{SQLITE_IOERR_TRUNCATE, "SQLITE_IOERR_TRUNCATE"},
    CodeName{SQLITE_IOERR_FSTAT, "SQLITE_IOERR_FSTAT"},
    CodeName{SQLITE_IOERR_SHMOPEN, "SQLITE_IOERR_SHMOPEN"},
    CodeName{SQLITE_IOERR_SHMSIZE, "SQLITE_IOERR_SHMSIZE"},
    CodeName{SQLITE_IOERR_SHMMAP, "SQLITE_IOERR_SHMMAP"},
    CodeName{SQLITE_IOERR_NOMEM, "SQLITE_IOERR_NOMEM"},
    CodeName{SQLITE_BUSY_SNAPSHOT, "SQLITE_BUSY_SNAPSHOT"},
    CodeName{SQLITE_CANTOPEN_ISDIR, "SQLITE_CANTOPEN_ISDIR"},
    CodeName{SQLITE_READONLY_DBMOVED, "SQLITE_READONLY_DBMOVED"},
    CodeName{SQLITE_CONSTRAINT_CHECK, "SQLITE_CONSTRAINT_CHECK"},
    CodeName{SQLITE_CONSTRAINT_FOREIGNKEY, "SQLITE_CONSTRAINT_FOREIGNKEY"},
    CodeName{SQLITE_CONSTRAINT_NOTNULL, "SQLITE_CONSTRAINT_NOTNULL"},
    CodeName{SQLITE_CONSTRAINT_PRIMARYKEY, "SQLITE_CONSTRAINT_PRIMARYKEY"},
    CodeName{SQLITE_CONSTRAINT_UNIQUE, "SQLITE_CONSTRAINT_UNIQUE"},
    CodeName{SQLITE_ERROR, "SQLITE_ERROR"},
    CodeName{SQLITE_INTERNAL, "SQLITE_INTERNAL"},
    CodeName{SQLITE_PERM, "SQLITE_PERM"},
    CodeName{SQLITE_ABORT, "SQLITE_ABORT"},
    CodeName{SQLITE_BUSY, "SQLITE_BUSY"},
    CodeName{SQLITE_LOCKED, "SQLITE_LOCKED"},
    CodeName{SQLITE_NOMEM, "SQLITE_NOMEM"},
    CodeName{SQLITE_READONLY, "SQLITE_READONLY"},
    CodeName{SQLITE_INTERRUPT, "SQLITE_INTERRUPT"},
    CodeName{SQLITE_IOERR, "SQLITE_IOERR"},
    CodeName{SQLITE_CORRUPT, "SQLITE_CORRUPT"},
    CodeName{SQLITE_NOTFOUND, "SQLITE_NOTFOUND"},
    CodeName{SQLITE_FULL, "SQLITE_FULL"},
    CodeName{SQLITE_CANTOPEN, "SQLITE_CANTOPEN"},
    CodeName{SQLITE_PROTOCOL, "SQLITE_PROTOCOL"},
    CodeName{SQLITE_SCHEMA, "SQLITE_SCHEMA"},
    CodeName{SQLITE_TOOBIG, "SQLITE_TOOBIG"},
    CodeName{SQLITE_CONSTRAINT, "SQLITE_CONSTRAINT"},
    CodeName{SQLITE_MISMATCH, "SQLITE_MISMATCH"},
    CodeName{SQLITE_MISUSE, "SQLITE_MISUSE"},
    CodeName{SQLITE_RANGE, "SQLITE_RANGE"},
    CodeName{SQLITE_NOTADB, "SQLITE_NOTADB"},
};

ErrorCode ToErrorCode(int rc) {
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
      return ErrorCode::kInvalidArgument;
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return ErrorCode::kParse;
    default:
      return ErrorCode::kIo;
  }
}

}  // namespace

std::string_view SqliteCodeName(int rc) {
  for (const CodeName& entry : kCodeNames) {
    if (entry.code == rc) return entry.name;
  }
  for (const CodeName& entry : kCodeNames) {
    if (entry.code == (rc & 0xff)) return entry.name;
  }
  return "SQLITE_UNKNOWN";
}

// --- Statement -------------------------------------------------------------

Statement::Statement(const Connection& connection, sqlite3_stmt* statement, std::string_view what)
    : connection_(&connection), statement_(statement), what_(what) {}

Statement::Statement(Statement&& other) noexcept
    : connection_(other.connection_),
      statement_(std::exchange(other.statement_, nullptr)),
      what_(std::move(other.what_)),
      bind_rc_(other.bind_rc_) {}

Statement::~Statement() { sqlite3_finalize(statement_); }

void Statement::NoteBind(int rc) {
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

Statement& Statement::Bind(int index, int64_t value) {
  NoteBind(sqlite3_bind_int64(statement_, index, value));
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  NoteBind(sqlite3_bind_double(statement_, index, value));
  return *this;
}

Statement& Statement::Bind(int index, std::string_view text) {
  // SQLITE_TRANSIENT: SQLite copies, so temporaries are safe to pass.
  NoteBind(sqlite3_bind_text64(statement_, index, text.data(), text.size(), SQLITE_TRANSIENT,
                               SQLITE_UTF8));
  return *this;
}

Statement& Statement::BindBlob(int index, std::span<const uint8_t> bytes) {
  if (bytes.empty()) return BindNull(index);
  NoteBind(sqlite3_bind_blob64(statement_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT));
  return *this;
}

Statement& Statement::BindNull(int index) {
  NoteBind(sqlite3_bind_null(statement_, index));
  return *this;
}

Result<bool> Statement::Step() {
  if (bind_rc_ != SQLITE_OK) return connection_->Fail(bind_rc_, what_);
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return connection_->Fail(rc, what_);
}

Status Statement::Run() {
  return ForEachRow([](const Statement&) { return Status{}; });
}

Status Statement::ForEachRow(const std::function<Status(const Statement&)>& row) {
  for (;;) {
    Result<bool> stepped = Step();
    if (!stepped) return ErrorOf(stepped);
    if (!*stepped) return {};
    if (Status done = row(*this); !done) return done;
  }
}

void Statement::Reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
  bind_rc_ = SQLITE_OK;
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

int64_t Statement::Int(int column) const { return sqlite3_column_int64(statement_, column); }

double Statement::Real(int column) const { return sqlite3_column_double(statement_, column); }

std::string Statement::Text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
  const int size = sqlite3_column_bytes(statement_, column);
  return text ? std::string(text, static_cast<size_t>(size)) : std::string();
}

std::span<const uint8_t> Statement::Blob(int column) const {
  const auto* bytes = static_cast<const uint8_t*>(sqlite3_column_blob(statement_, column));
  const int size = sqlite3_column_bytes(statement_, column);
  if (!bytes) return {};
  return {bytes, static_cast<size_t>(size)};
}

// --- Connection ------------------------------------------------------------

void Connection::Closer::operator()(sqlite3* db) const noexcept {
  // _v2 defers the close if a statement is still alive instead of failing;
  // Statements never outlive the Store, so this is belt and braces.
  sqlite3_close_v2(db);
}

Connection::~Connection() = default;

Result<Connection> Connection::Open(const std::string& path, Access access) {
  sqlite3* db = nullptr;
  const int flags = (access == Access::kReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
                    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  Connection connection(db, path);
  if (rc != SQLITE_OK) return connection.Fail(rc, "opening the database");
  return connection;
}

Result<bool> Connection::FileHasMoved() const {
  int moved = 0;
  const int rc = sqlite3_file_control(db_.get(), "main", SQLITE_FCNTL_HAS_MOVED, &moved);
  if (rc != SQLITE_OK) return Fail(rc, "checking the database file");
  return moved != 0;
}

std::unexpected<Error> Connection::Fail(int rc, std::string_view what) const {
  sqlite3* db = db_.get();
  // sqlite3_errmsg is more precise ("UNIQUE constraint failed: runs.id") but
  // only describes the connection's latest error; a bind or commit failure
  // reported later may not be that one.
  const bool latest = db != nullptr && sqlite3_extended_errcode(db) == rc;
  const char* message = latest ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const int os_errno = latest ? sqlite3_system_errno(db) : 0;
  std::string text = fmt::format("{}: {} ({}", what, message, SqliteCodeName(rc));
  const int primary = rc & 0xff;
  if (os_errno != 0 && (primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN)) {
    text += fmt::format(", {}", ErrnoText(os_errno));
  }
  text += ')';
  return std::unexpected<Error>(Error{
      .code = ToErrorCode(rc), .message = std::move(text), .path = path_, .os_errno = os_errno});
}

Status Connection::Exec(std::string_view sql, std::string_view what) const {
  const std::string text(sql);  // sqlite3_exec wants a NUL-terminated string
  const int rc = sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return Fail(rc, what);
  return {};
}

Result<Statement> Connection::Prepare(std::string_view sql, std::string_view what) const {
  sqlite3_stmt* statement = nullptr;
  const int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()), 0,
                                    &statement, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(statement);
    return Fail(rc, what);
  }
  return Statement(*this, statement, what);
}

Result<std::string> Connection::QueryText(std::string_view sql, std::string_view what) const {
  Result<Statement> statement = Prepare(sql, what);
  if (!statement) return ErrorOf(statement);
  Result<bool> row = statement->Step();
  if (!row) return ErrorOf(row);
  return *row ? statement->Text(0) : std::string();
}

Result<int64_t> Connection::QueryInt(std::string_view sql, std::string_view what) const {
  Result<Statement> statement = Prepare(sql, what);
  if (!statement) return ErrorOf(statement);
  Result<bool> row = statement->Step();
  if (!row) return ErrorOf(row);
  return *row ? statement->Int(0) : 0;
}

int64_t Connection::LastInsertId() const { return sqlite3_last_insert_rowid(db_.get()); }

int64_t Connection::Changes() const { return sqlite3_changes64(db_.get()); }

// --- Transaction -----------------------------------------------------------

Result<Transaction> Transaction::Begin(const Connection& connection, std::string_view what,
                                       Kind kind) {
  // A transaction left open by a failed ROLLBACK would make every later
  // BEGIN fail; clearing it here is what keeps the Store usable.
  if (sqlite3_get_autocommit(connection.Handle()) == 0) {
    sqlite3_exec(connection.Handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Status begun = connection.Exec(kind == Kind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN", what);
  if (!begun) return ErrorOf(begun);
  return Transaction(connection, what);
}

Status Transaction::Commit() {
  Status committed = connection_->Exec("COMMIT", what_);
  if (!committed) return committed;  // still open: the destructor rolls back
  connection_ = nullptr;
  return {};
}

Transaction::~Transaction() {
  if (connection_ == nullptr) return;
  if (sqlite3_get_autocommit(connection_->Handle()) == 0) {
    sqlite3_exec(connection_->Handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

}  // namespace iowatch::probes::internal
