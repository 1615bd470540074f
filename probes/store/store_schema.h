// The store's schema as an ordered list of migrations, and the code that
// applies them. PRAGMA user_version holds the number of the last migration
// applied; Migrate applies each later one in its own IMMEDIATE transaction
// together with the version bump, so a crash or a failing statement leaves
// the database at the previous version, never between two. A database whose
// version is newer than the last migration this build knows is refused
// (kUnsupported) rather than written by code that does not understand it.
// Migrations are append-only: a released one is never edited, a change is a
// new migration.
// Thread-safety: as the Connection's (one thread at a time); two processes
// migrating the same file at once are serialized by the write lock, and the
// second re-reads the version inside its transaction and skips what is done.
#pragma once

#include <span>
#include <string_view>

#include "common/result.h"
#include "probes/store/store_sqlite.h"

namespace iowatch::probes::internal {

struct Migration {
  int version;           // 1, 2, 3, ... in order; user_version after it is applied
  std::string_view sql;  // one or more statements
};

// The store's migrations, oldest first.
std::span<const Migration> StoreMigrations();

Status Migrate(const Connection& connection, std::span<const Migration> migrations);

// Before anything is written to a file: it is refused untouched (kInvalidArgument)
// when it holds tables but no iowatch schema (user_version 0: another
// program's database), or (kUnsupported) when its schema is newer than
// `migrations` know.
Status CheckOwnSchema(const Connection& connection, std::span<const Migration> migrations);

// For a read-only open, which cannot migrate: CheckOwnSchema, then kNotFound
// when the file holds no iowatch schema yet and kUnsupported when its schema
// is older than this build's (serve or a writing command migrates it).
Status CheckCurrentSchema(const Connection& connection, std::span<const Migration> migrations);

}  // namespace iowatch::probes::internal
