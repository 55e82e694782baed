-- Keepsake store, schema version 1.
--
-- Histories: each is a chain of versions. A version row is one step of the chain, holding the
-- changes (path/value records) that turn it back into the version before it. Versions on the
-- redo stack are marked undone. Checkpoints hold a whole value at one chain position, so that
-- opening a history replays a bounded stretch of the chain instead of all of it.
-- Snapshots: named values of the caretaker, one row per tracked property.
-- Blobs: large byte strings, stored once by content and referenced from JSON as {"$blob": id}.
-- JSON columns are validated by Keepsake, not by CHECK (json_valid(…)): SQLite before 3.42
-- refuses that function in a schema when trusted_schema is OFF, which Keepsake sets.

CREATE TABLE history (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,            -- the application's id for the history (a document id)
    value_type TEXT NOT NULL,             -- the Swift type of the value, for inspection
    created_at REAL NOT NULL,             -- seconds since 1970
    modified_at REAL NOT NULL,
    maximum_versions INTEGER CHECK (maximum_versions IS NULL OR maximum_versions > 0),
    revision INTEGER NOT NULL DEFAULT 0,  -- bumped by every write, to detect a second writer
    undo_count INTEGER NOT NULL DEFAULT 0,     -- versions to undo in the current scope
    redo_count INTEGER NOT NULL DEFAULT 0,     -- versions to redo in the current scope
    version_count INTEGER NOT NULL DEFAULT 0   -- versions stored, all scopes: so that opening a
                                               -- long history counts nothing
) STRICT;

CREATE TABLE scope (
    history_id INTEGER NOT NULL REFERENCES history(id) ON DELETE CASCADE,
    level INTEGER NOT NULL CHECK (level >= 0),
    base_tag TEXT,                        -- JSON tag of the version the scope started from
    PRIMARY KEY (history_id, level)
) STRICT, WITHOUT ROWID;

CREATE TABLE version (
    id INTEGER PRIMARY KEY,
    history_id INTEGER NOT NULL REFERENCES history(id) ON DELETE CASCADE,
    position INTEGER NOT NULL CHECK (position > 0),  -- creation order within the history
    scope_level INTEGER NOT NULL CHECK (scope_level >= 0),
    is_undone INTEGER NOT NULL DEFAULT 0 CHECK (is_undone IN (0, 1)),  -- 1: on the redo stack
    tag TEXT,  -- the version's tag, JSON
    created_at REAL NOT NULL,
    UNIQUE (history_id, position)
) STRICT;

CREATE TABLE change (
    version_id INTEGER NOT NULL REFERENCES version(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 0),   -- order of application when undoing
    path TEXT NOT NULL,                   -- the path descriptor's text form, '' for the root
    kind TEXT NOT NULL,                   -- replace, text, bytes, elements, entries, members, …
    patch TEXT NOT NULL,  -- the change as JSON: {"old": …, "new": …}, …
    PRIMARY KEY (version_id, ordinal)
) STRICT, WITHOUT ROWID;

CREATE INDEX change_by_path ON change(path);

CREATE TABLE checkpoint (
    id INTEGER PRIMARY KEY,
    history_id INTEGER NOT NULL REFERENCES history(id) ON DELETE CASCADE,
    version_id INTEGER REFERENCES version(id) ON DELETE CASCADE,  -- value right after it; NULL:
                                          -- the base, the value before every version kept
    value TEXT NOT NULL,                  -- the whole value as JSON
    created_at REAL NOT NULL
) STRICT;

CREATE INDEX checkpoint_by_history ON checkpoint(history_id, version_id);
CREATE INDEX checkpoint_by_version ON checkpoint(version_id);  -- joins, and cascading deletes
CREATE INDEX version_by_scope ON version(history_id, scope_level, is_undone, position);

CREATE TABLE blob (
    id INTEGER PRIMARY KEY,
    digest TEXT NOT NULL,                 -- XXH64 of the bytes, 16 hex digits
    size INTEGER NOT NULL CHECK (size >= 0),
    bytes BLOB NOT NULL
) STRICT;

CREATE INDEX blob_by_digest ON blob(digest, size);

CREATE TABLE snapshot (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,              -- keeps two types or documents from sharing names
    name TEXT NOT NULL,
    value_type TEXT NOT NULL,
    created_at REAL NOT NULL,
    UNIQUE (namespace, name)
) STRICT;

CREATE TABLE snapshot_property (
    snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,
    path TEXT NOT NULL,                   -- the property's path descriptor
    value TEXT NOT NULL,  -- its value as JSON
    PRIMARY KEY (snapshot_id, path)
) STRICT, WITHOUT ROWID;
