#ifndef KEEPSAKE_CSQLITE_SHIM_H
#define KEEPSAKE_CSQLITE_SHIM_H

#include <sqlite3.h>

// STRICT tables and sqlite3_changes64 came with SQLite 3.37.0 (Ubuntu 22.04 has 3.37.2).
#if SQLITE_VERSION_NUMBER < 3037000
#error "Keepsake needs SQLite 3.37 or later (Ubuntu 22.04, Debian 12, macOS 14, iOS 17 have it)"
#endif

#include <stdlib.h>  // defines __GLIBC__ where the C library is glibc
#if defined(__GLIBC__)
#include <malloc.h>
#endif

// Hands the whole free pages of the allocator's heaps back to the system. glibc keeps what a
// thread other than the main one frees in that thread's own arena, and returns from it only the
// free memory at the top: after decoding and encoding a large value on a background thread, the
// process kept hundreds of MB it no longer used. Elsewhere the allocator returns such memory
// itself, and this does nothing.
static inline void keepsake_release_free_memory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
// Binding with it makes SQLite copy the bytes before the call returns.
static inline sqlite3_destructor_type keepsake_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

// sqlite3_db_config is variadic, which Swift cannot call: this sets one of its on/off options.
static inline int keepsake_sqlite_db_config_flag(sqlite3 *db, int option, int on) {
    return sqlite3_db_config(db, option, on, (int *)0);
}

#endif
