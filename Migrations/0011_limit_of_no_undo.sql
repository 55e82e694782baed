-- Keepsake store, schema version 11: a history may keep no undo step (`maximum_versions = 0`).
--
-- `maximumVersions` counts the versions kept besides the current one: a limit of 1 keeps one
-- undo step. Until schema 10 the column refused 0, and the library stopped the process on a
-- limit below 1: an app passing its user's "no undo" setting through crashed. A limit of 0 now
-- keeps the current version only (the library takes any limit below 0 as 0).
--
-- SQLite cannot change a CHECK constraint in place: the table is rebuilt with the same columns
-- and rows, as schema 8 rebuilt it, with foreign keys off (checked before it commits) and
-- renamed as SQLite did before 3.26. The largest id ever given stays in `sqlite_sequence`, so
-- that a deleted history's id is still never given again.
-- keepsake: foreign keys off

PRAGMA legacy_alter_table = ON;

CREATE TABLE history_11 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,                 -- the application's id for the history (a document id)
    value_type TEXT NOT NULL,                  -- the Swift type of the value, for inspection
    created_at REAL NOT NULL,                  -- seconds since 1970
    modified_at REAL NOT NULL,
    maximum_versions INTEGER CHECK (maximum_versions IS NULL OR maximum_versions >= 0),
    -- The counters, while the history has no version (then on its newest version row).
    revision INTEGER NOT NULL DEFAULT 0,       -- bumped by every write, to detect a second writer
    undo_count INTEGER NOT NULL DEFAULT 0,     -- versions to undo in the current scope
    redo_count INTEGER NOT NULL DEFAULT 0,     -- versions to redo in the current scope
    version_count INTEGER NOT NULL DEFAULT 0,  -- versions stored, all scopes
    held_digest INTEGER                        -- of the change held back by debouncing
) STRICT;

INSERT INTO history_11 (id, name, value_type, created_at, modified_at, maximum_versions, revision,
                        undo_count, redo_count, version_count, held_digest)
SELECT id, name, value_type, created_at, modified_at, maximum_versions, revision,
       undo_count, redo_count, version_count, held_digest
FROM history;

INSERT INTO sqlite_sequence (name, seq)
SELECT 'history_11', seq FROM sqlite_sequence WHERE name = 'history'
    AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'history_11');
UPDATE sqlite_sequence SET seq = max(seq, (SELECT seq FROM sqlite_sequence WHERE name = 'history'))
WHERE name = 'history_11' AND EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'history');

DROP TABLE history;
ALTER TABLE history_11 RENAME TO history;

PRAGMA legacy_alter_table = OFF;
