// A small query driver around SQLite (sqlite3.c from npm's better-sqlite3,
// fetched by tests/wasi/check.sh): opens DB read-only without locking
// (the "unix-none" VFS: a read-only preopen) and prints each row of SQL,
// columns separated by '|'.
// usage: query DB SQL
#include <stdio.h>
#include "sqlite3.h"
static int row(void* u, int n, char** v, char** names) {
  for (int i = 0; i < n; ++i) printf("%s%s", i ? "|" : "", v[i] ? v[i] : "NULL");
  printf("\n");
  return 0;
}
int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: query DB SQL\n");
    return 2;
  }
  sqlite3* db;
  if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, "unix-none") != SQLITE_OK) {
    fprintf(stderr, "open: %s\n", sqlite3_errmsg(db));
    return 1;
  }
  char* err = 0;
  if (sqlite3_exec(db, argv[2], row, 0, &err) != SQLITE_OK) {
    fprintf(stderr, "error: %s\n", err);
    return 1;
  }
  sqlite3_close(db);
  return 0;
}
