// Internal to the history library: libpq's functions, loaded at run time (dlopen "libpq.so.5") by
// the first PostgreSQL store. tipbench needs no libpq to start: a machine without libpq5 (a GPU box
// running the device bundle, which stays within its size) runs everything but a postgresql:// store,
// and that says which package is missing. Types come from libpq-fe.h at build time.
#pragma once

#include <libpq-fe.h>

#include <string>

namespace tipbench::history {

struct LibPq {
  decltype(&PQclear) clear;
  decltype(&PQconnectdbParams) connectdbParams;
  decltype(&PQconninfoFree) conninfoFree;
  decltype(&PQconninfoParse) conninfoParse;
  decltype(&PQerrorMessage) errorMessage;
  decltype(&PQexec) exec;
  decltype(&PQexecParams) execParams;
  decltype(&PQfinish) finish;
  decltype(&PQgetisnull) getisnull;
  decltype(&PQgetvalue) getvalue;
  decltype(&PQntuples) ntuples;
  decltype(&PQresultErrorField) resultErrorField;
  decltype(&PQresultStatus) resultStatus;
  decltype(&PQsetNoticeProcessor) setNoticeProcessor;
  decltype(&PQstatus) status;
};

// libpq, loaded on the first call (thread-safe); throws StoreError "<shown_url>: ..." naming the
// package when it cannot be loaded.
const LibPq& libpq(const std::string& shown_url);

}  // namespace tipbench::history
