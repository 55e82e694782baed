-- Keepsake store, schema version 2: changes held back by debouncing, digests that catch damage,
-- and the version of the stored record format.
--
-- While the user types, a debounced controller holds its newest value back instead of
-- recording a version per keystroke. The held value is written to `pending_change` as it is
-- held — the change records that turn it back into the history's current value, in the same
-- path/kind/patch form as `change` — replaced on every keystroke, so that a crash loses nothing
-- that was typed. When the change is recorded as a version (or on the next open, after a
-- crash) these rows are deleted in the same transaction.

CREATE TABLE pending_change (
    history_id INTEGER NOT NULL REFERENCES history(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 0),  -- order of application when undoing
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    patch TEXT NOT NULL,
    PRIMARY KEY (history_id, ordinal)
) STRICT, WITHOUT ROWID;

-- Digests: XXH64 (as a signed 64-bit integer) of what a row holds together with where it
-- belongs, checked whenever the row is read, so that a damaged byte, an edited value or rows
-- moved to another version give an error instead of a wrong value. A change's digest covers
-- its version's position, its ordinal, path, kind and patch; a checkpoint's covers the
-- position of its version (0 for the base value) and its JSON; a snapshot property's covers
-- its snapshot's namespace and name, its path and its stored value. Rows written before
-- schema 2 have none, and are read unchecked.
ALTER TABLE change ADD COLUMN digest INTEGER;
ALTER TABLE checkpoint ADD COLUMN digest INTEGER;
ALTER TABLE snapshot_property ADD COLUMN digest INTEGER;

-- The format of a version's change records and of a snapshot's property values, so that a
-- later release can tell old records from new: 1 for everything written so far.
ALTER TABLE version ADD COLUMN format INTEGER NOT NULL DEFAULT 1;
ALTER TABLE snapshot ADD COLUMN format INTEGER NOT NULL DEFAULT 1;
