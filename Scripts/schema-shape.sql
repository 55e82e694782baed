-- The shape of a store's schema, one line each: its tables (and whether they have rowids), their
-- columns (declared type, NOT NULL, default, place in the primary key) and its indexes (their
-- table, key columns, uniqueness, whether partial). Scripts/generate-migrations embeds this
-- query, and what it lists for a store the migrations make, in the Keepsake module
-- (Schema.shapeQuery, Schema.shape); opening a store for writing and verify() compare. A
-- damaged CREATE statement that still parses (a column renamed, a type or default changed) is
-- found this way; CHECK constraints and a partial index's WHERE clause are not listed.
SELECT 'table ' || name || CASE WHEN wr THEN ' WITHOUT ROWID' ELSE '' END
FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'
UNION ALL
SELECT 'column ' || m.name || '.' || p.name || ' ' || p.type
    || CASE WHEN p."notnull" THEN ' NOT NULL' ELSE '' END
    || coalesce(' DEFAULT ' || p.dflt_value, '')
    || CASE WHEN p.pk > 0 THEN ' PRIMARY KEY ' || p.pk ELSE '' END
FROM sqlite_schema m, pragma_table_xinfo(m.name) p
WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\'
UNION ALL
SELECT 'index ' || m.name || ' ON ' || m.tbl_name || ' ('
    || (SELECT group_concat(c, ', ') FROM (
        SELECT coalesce(x.name, 'an expression') || CASE WHEN x.desc THEN ' DESC' ELSE '' END AS c
        FROM pragma_index_xinfo(m.name) x WHERE x.key ORDER BY x.seqno))
    || ')' || CASE WHEN l."unique" THEN ' UNIQUE' ELSE '' END || CASE WHEN l.partial THEN ' PARTIAL' ELSE '' END
FROM sqlite_schema m JOIN pragma_index_list(m.tbl_name) l ON l.name = m.name
WHERE m.type = 'index'
ORDER BY 1
