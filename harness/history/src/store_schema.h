// Internal to the history library: the store's schema (docs/history.md) and the checks that a
// file is this store, of a schema this build reads.
#pragma once

#include <sqlite3.h>

#include <string>

namespace tipbench::history {

// "TIPB": PRAGMA application_id of a tipbench history store, so another program's SQLite file is
// never mistaken for an empty store.
inline constexpr int kApplicationId = 0x54495042;
inline constexpr int kSchemaVersion = 1;  // PRAGMA user_version

// Runs sql (one or more statements); throws StoreError naming `path` and SQLite's message.
void exec_script(sqlite3* db, const std::string& sql, const std::string& path);

// Creates the schema in an empty database, checks an existing one (application id, schema
// version), and sets the connection's pragmas (WAL, foreign keys, busy timeout). Throws StoreError.
void prepare_store(sqlite3* db, const std::string& path);

}  // namespace tipbench::history
