-- Keepsake store, schema version 4: a version holds its own changes, and is found by its
-- history and position.
--
-- Until schema 3 an append wrote a `version` row (a table and two indexes), one `change` row
-- per changed path (a table and an index on the path) and the history row: about seven pages
-- of the write-ahead log for a one-field edit. Now a version is one row of a table keyed by
-- (history_id, position), with its changes in the row, so an append writes the end of that
-- table and the history row: two pages. Undone versions are also listed by a partial index,
-- which appends never touch.
--
-- The history's counters (the revision every write bumps, the stack sizes, the time of the last
-- write) move with it: they are kept on the history's newest version row, which an append
-- writes anyway, and on the history row only while the history has no version. The other
-- version rows hold NULL there.
--
-- The root scope's `floor`: when a history passes its limit, the oldest versions are folded
-- into the base value by raising the floor over them, which writes one row. Versions at or
-- below the floor are no longer listed, counted or undone; they are deleted once a checkpoint
-- lies at or below the floor, whose value then becomes the base (a copy of its text, so nothing
-- is decoded or encoded while the user waits). Until then the base value and the versions up
-- to the floor give the value at the floor.
--
-- A version's `changes` column is a JSON array with one element per change, in the order undo
-- applies them: [path, kind, patch, digest]. The digest is the one `change.digest` held
-- (XXH64 of the version's position, the change's index, path, kind and patch; null for rows
-- written before schema 2), so damage is caught in migrated rows as in new ones. Checkpoints
-- name their version by position (NULL: the base value).

CREATE TABLE version_4 (
    history_id INTEGER NOT NULL REFERENCES history(id) ON DELETE CASCADE,
    position INTEGER NOT NULL CHECK (position > 0),  -- creation order within the history
    scope_level INTEGER NOT NULL CHECK (scope_level >= 0),
    is_undone INTEGER NOT NULL DEFAULT 0 CHECK (is_undone IN (0, 1)),  -- 1: on the redo stack
    tag TEXT,  -- the version's tag, JSON
    created_at REAL NOT NULL,
    format INTEGER NOT NULL DEFAULT 1,  -- the format of its change records
    changes TEXT NOT NULL,  -- JSON: [[path, kind, patch, digest], …] in order of application when undoing
    -- The history's counters, on its newest version only (NULL on the others): as on `history`.
    revision INTEGER,
    undo_count INTEGER,
    redo_count INTEGER,
    version_count INTEGER,
    modified_at REAL,
    PRIMARY KEY (history_id, position)
) STRICT, WITHOUT ROWID;

INSERT INTO version_4 (history_id, position, scope_level, is_undone, tag, created_at, format, changes,
                       revision, undo_count, redo_count, version_count, modified_at)
SELECT v.history_id, v.position, v.scope_level, v.is_undone, v.tag, v.created_at, v.format,
       coalesce((SELECT '[' || group_concat('[' || json_quote(c.path) || ',' || json_quote(c.kind) || ','
                                            || c.patch || ',' || coalesce(c.digest, 'null') || ']', ',') || ']'
                 FROM (SELECT path, kind, patch, digest FROM change WHERE version_id = v.id ORDER BY ordinal) AS c),
                '[]'),
       n.revision, n.undo_count, n.redo_count, n.version_count, n.modified_at
FROM version v
LEFT JOIN (SELECT h.id, h.revision, h.undo_count, h.redo_count, h.version_count, h.modified_at,
                  (SELECT max(position) FROM version WHERE history_id = h.id) AS newest
           FROM history h) AS n ON n.id = v.history_id AND n.newest = v.position;

CREATE TABLE checkpoint_4 (
    id INTEGER PRIMARY KEY,
    history_id INTEGER NOT NULL REFERENCES history(id) ON DELETE CASCADE,
    position INTEGER,                     -- the value right after that version; NULL: the base,
                                          -- the value before every version kept
    value TEXT NOT NULL,                  -- the whole value as JSON
    created_at REAL NOT NULL,
    digest INTEGER,
    FOREIGN KEY (history_id, position) REFERENCES version_4(history_id, position) ON DELETE CASCADE
) STRICT;

INSERT INTO checkpoint_4 (id, history_id, position, value, created_at, digest)
SELECT c.id, c.history_id, v.position, c.value, c.created_at, c.digest
FROM checkpoint c LEFT JOIN version v ON v.id = c.version_id;

DROP VIEW timeline;
DROP VIEW changes;
DROP VIEW sizes;
DROP TABLE change;
DROP TABLE checkpoint;
DROP TABLE version;
ALTER TABLE version_4 RENAME TO version;
ALTER TABLE checkpoint_4 RENAME TO checkpoint;

ALTER TABLE scope ADD COLUMN floor INTEGER NOT NULL DEFAULT 0 CHECK (floor >= 0);

CREATE INDEX version_undone ON version(history_id, scope_level, position) WHERE is_undone = 1;
CREATE INDEX checkpoint_by_position ON checkpoint(history_id, position);

-- The views of schema 3, reading the changes from their versions. They read the JSON with
-- json_extract, not the `->` and `->>` operators, which SQLite has only since 3.38 (Ubuntu 22.04
-- has 3.37.2): the first release wrote them with the operators, and stores it created have
-- those views until a newer Keepsake opens them for writing, which writes these instead
-- (Schema.refreshViews). A patch shows as its JSON text, as `->` showed it (a patch that is a
-- bare number shows in SQLite's form of it: -12.5e3 as -12500.0).

CREATE VIEW timeline AS
SELECT h.name AS history, 0 AS version,
       strftime('%Y-%m-%dT%H:%M:%S', h.created_at, 'unixepoch', 'localtime') AS date,
       0 AS scope, 'base' AS state,
       CASE json_type(s.base_tag) WHEN 'text' THEN json_extract(s.base_tag, '$') ELSE s.base_tag END AS tag,
       '' AS paths
FROM history h JOIN scope s ON s.history_id = h.id AND s.level = 0
UNION ALL
SELECT h.name, v.position,
       strftime('%Y-%m-%dT%H:%M:%S', v.created_at, 'unixepoch', 'localtime'),
       v.scope_level, CASE v.is_undone WHEN 1 THEN 'undone' ELSE 'applied' END,
       CASE json_type(v.tag) WHEN 'text' THEN json_extract(v.tag, '$') ELSE v.tag END,
       (SELECT group_concat(json_extract(j.value, '$[0]'), ', ') FROM json_each(v.changes) AS j)
FROM version v JOIN history h ON h.id = v.history_id JOIN scope s ON s.history_id = v.history_id AND s.level = 0
WHERE v.position > s.floor;

-- Every change of a version kept: what version `version` of `history` changed, and how
-- (`patch` is JSON).
CREATE VIEW changes AS
SELECT h.name AS history, v.position AS version, j.key AS ordinal, json_extract(j.value, '$[0]') AS path,
       json_extract(j.value, '$[1]') AS kind,
       CASE json_type(j.value, '$[2]')
           WHEN 'object' THEN json_extract(j.value, '$[2]') WHEN 'array' THEN json_extract(j.value, '$[2]')
           WHEN 'true' THEN 'true' WHEN 'false' THEN 'false'
           ELSE json_quote(json_extract(j.value, '$[2]')) END AS patch
FROM version v JOIN history h ON h.id = v.history_id
     JOIN scope s ON s.history_id = v.history_id AND s.level = 0, json_each(v.changes) AS j
WHERE v.position > s.floor;

-- What each history takes on disk: versions stored (those folded under the floor and not yet
-- deleted too), changes and their bytes (the versions' `changes` text),
-- checkpoints and their bytes, and the bytes of the blobs its changes and checkpoints refer to.
CREATE VIEW sizes AS
SELECT h.name AS history,
       (SELECT count(*) FROM version WHERE history_id = h.id) AS versions,
       (SELECT coalesce(sum(json_array_length(changes)), 0) FROM version WHERE history_id = h.id) AS changes,
       (SELECT coalesce(sum(length(changes)), 0) FROM version WHERE history_id = h.id) AS change_bytes,
       (SELECT count(*) FROM checkpoint WHERE history_id = h.id) AS checkpoints,
       (SELECT coalesce(sum(length(value)), 0) FROM checkpoint WHERE history_id = h.id) AS checkpoint_bytes,
       (SELECT coalesce(sum(b.size), 0) FROM blob b WHERE b.id IN (
            SELECT j.value FROM version v, json_tree(v.changes) j
            WHERE v.history_id = h.id AND json_valid(v.changes) AND j.key = '$blob'
            UNION SELECT j.value FROM checkpoint k, json_tree(k.value) j
            WHERE k.history_id = h.id AND json_valid(k.value) AND j.key = '$blob')) AS blob_bytes
FROM history h;
