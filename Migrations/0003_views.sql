-- Keepsake store, schema version 3: views named for what people ask of a store in the sqlite3
-- shell. Every view has a `history` column (or names snapshots), so a query filters by the
-- history's name and works on any store:
--
--   SELECT version, state, tag, paths FROM timeline WHERE history = 'note-42' ORDER BY version;
--
-- The views use SQLite's JSON functions, which connections with trusted_schema=OFF (Keepsake's
-- own) refuse inside views: they are for the shell, where trusted_schema is on by default.
-- Dates are ISO-8601 local time.

-- Every version of every history, numbered as `keepsake log` numbers them: version 0 is the
-- base value (before every version kept) with its tag; state is base, applied or undone; tag
-- is a string tag as itself and any other as its JSON; paths are the changed paths in the
-- order undo applies them.
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
       (SELECT group_concat(path, ', ') FROM (SELECT path FROM change WHERE version_id = v.id ORDER BY ordinal))
FROM version v JOIN history h ON h.id = v.history_id;

-- Every stored change: what version `version` of `history` changed, and how (`patch` is JSON).
CREATE VIEW changes AS
SELECT h.name AS history, v.position AS version, c.ordinal, c.path, c.kind, c.patch
FROM change c JOIN version v ON v.id = c.version_id JOIN history h ON h.id = v.history_id;

-- Every named snapshot: its value's type, its scope (a document id, or NULL), name, date, and
-- size in bytes (its property rows, and the blobs they refer to).
CREATE VIEW snapshots AS
SELECT s.value_type AS type,
       CASE WHEN s.namespace = s.value_type THEN NULL
            ELSE substr(s.namespace, 1, length(s.namespace) - length(s.value_type) - 1) END AS scope,
       s.name, strftime('%Y-%m-%dT%H:%M:%S', s.created_at, 'unixepoch', 'localtime') AS date,
       (SELECT coalesce(sum(length(p.path) + length(p.value)), 0) FROM snapshot_property p WHERE p.snapshot_id = s.id)
       + (SELECT coalesce(sum(b.size), 0) FROM blob b WHERE b.id IN (
             SELECT j.value FROM snapshot_property p, json_tree(p.value) j
             WHERE p.snapshot_id = s.id AND json_valid(p.value) AND j.key IN ('$blob', '$json'))) AS bytes
FROM snapshot s;

-- What each history takes: versions, change rows and their bytes (path and patch),
-- checkpoints and their bytes, and the bytes of the blobs its changes and checkpoints refer to.
CREATE VIEW sizes AS
SELECT h.name AS history,
       (SELECT count(*) FROM version WHERE history_id = h.id) AS versions,
       (SELECT count(*) FROM change c JOIN version v ON v.id = c.version_id WHERE v.history_id = h.id) AS changes,
       (SELECT coalesce(sum(length(c.path) + length(c.patch)), 0) FROM change c JOIN version v ON v.id = c.version_id
        WHERE v.history_id = h.id) AS change_bytes,
       (SELECT count(*) FROM checkpoint WHERE history_id = h.id) AS checkpoints,
       (SELECT coalesce(sum(length(value)), 0) FROM checkpoint WHERE history_id = h.id) AS checkpoint_bytes,
       (SELECT coalesce(sum(b.size), 0) FROM blob b WHERE b.id IN (
            SELECT j.value FROM change c JOIN version v ON v.id = c.version_id, json_tree(c.patch) j
            WHERE v.history_id = h.id AND json_valid(c.patch) AND j.key = '$blob'
            UNION SELECT j.value FROM checkpoint k, json_tree(k.value) j
            WHERE k.history_id = h.id AND json_valid(k.value) AND j.key = '$blob')) AS blob_bytes
FROM history h;
