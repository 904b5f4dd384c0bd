// Internal to the history library: the store's schema on a PostgreSQL server (the SQLite store's,
// docs/history.md) and the checks that a database is this store, of a schema this build reads.
#pragma once

#include "postgres_connection.h"

namespace tipbench::history {

// The one row of table tipbench_store: what SQLite's PRAGMA application_id and user_version say
// of a file. A database with tables but no such row belongs to another application.
inline constexpr const char* kPostgresApplication = "tipbench history store";

// Transaction-level advisory lock keys ("TIPB" and a number): one for making the schema, one that
// serialises ingests as SQLite's BEGIN IMMEDIATE does. Scoped to the database.
inline constexpr const char* kSchemaLock = "1414090818000001";
inline constexpr const char* kIngestLock = "1414090818000002";

// Creates the schema in a database that has none (in one transaction: two processes doing it at
// once both succeed; unless !make_when_absent: then StoreError), checks an existing one (marker,
// schema version). Throws StoreError.
void prepare_postgres_store(const PgConnection& db, bool make_when_absent);

}  // namespace tipbench::history
