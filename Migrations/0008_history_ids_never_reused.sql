-- Keepsake store, schema version 8: a deleted history's id is never given to another history.
--
-- An open history knows its rows by the history's id. Until schema 7, `history.id` was a plain
-- INTEGER PRIMARY KEY, and SQLite gives a new row the largest id plus one: deleting the newest
-- history and creating another gave the new one the deleted one's id. A controller still open
-- on the deleted history (in this process or another) then found rows under its id, and when
-- their revision matched its own, it wrote its next version into the other history, which no
-- longer opened. Now the id is AUTOINCREMENT, so SQLite never hands it out again
-- (`sqlite_sequence` keeps the largest one), and that controller gets a conflict.
--
-- The table is rebuilt with the same columns and rows. Dropping the old table with foreign keys
-- on would delete every history's versions, scopes, checkpoints and held changes with it: the
-- line below has the migration run with them off, and checked (`PRAGMA foreign_key_check`)
-- before it commits. The views name `history`, so it is renamed as SQLite did before 3.26,
-- without checking them against a schema in which `history` is missing for a moment.
-- keepsake: foreign keys off

PRAGMA legacy_alter_table = ON;

CREATE TABLE history_8 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,                 -- the application's id for the history (a document id)
    value_type TEXT NOT NULL,                  -- the Swift type of the value, for inspection
    created_at REAL NOT NULL,                  -- seconds since 1970
    modified_at REAL NOT NULL,
    maximum_versions INTEGER CHECK (maximum_versions IS NULL OR maximum_versions > 0),
    -- The counters, while the history has no version (then on its newest version row).
    revision INTEGER NOT NULL DEFAULT 0,       -- bumped by every write, to detect a second writer
    undo_count INTEGER NOT NULL DEFAULT 0,     -- versions to undo in the current scope
    redo_count INTEGER NOT NULL DEFAULT 0,     -- versions to redo in the current scope
    version_count INTEGER NOT NULL DEFAULT 0,  -- versions stored, all scopes
    held_digest INTEGER                        -- of the change held back by debouncing
) STRICT;

INSERT INTO history_8 (id, name, value_type, created_at, modified_at, maximum_versions, revision,
                       undo_count, redo_count, version_count, held_digest)
SELECT id, name, value_type, created_at, modified_at, maximum_versions, revision,
       undo_count, redo_count, version_count, held_digest
FROM history;

DROP TABLE history;
ALTER TABLE history_8 RENAME TO history;

PRAGMA legacy_alter_table = OFF;
