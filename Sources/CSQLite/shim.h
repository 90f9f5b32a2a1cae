// SQLite, for the bake state. SQLITE_TRANSIENT is a macro Swift cannot import: it is the
// destructor value that makes SQLite copy a bound value, which these wrappers pass.
#include <sqlite3.h>

static inline int csqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int bytes) {
    return sqlite3_bind_text(statement, index, text, bytes, SQLITE_TRANSIENT);
}

static inline int csqlite_bind_blob(sqlite3_stmt *statement, int index, const void *blob, int bytes) {
    return sqlite3_bind_blob(statement, index, blob, bytes, SQLITE_TRANSIENT);
}
