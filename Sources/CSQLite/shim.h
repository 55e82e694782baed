#ifndef KEEPSAKE_CSQLITE_SHIM_H
#define KEEPSAKE_CSQLITE_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
// Binding with it makes SQLite copy the bytes before the call returns.
static inline sqlite3_destructor_type keepsake_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
