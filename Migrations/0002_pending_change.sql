-- Keepsake store, schema version 2: changes held back by debouncing.
--
-- While the user types, a debounced controller holds its newest value back instead of
-- recording a version per keystroke. The held value is written here as it is held — the change
-- records that turn it back into the history's current value, the same path/kind/patch form as
-- `change` — replaced on every keystroke, so that a crash loses nothing that was typed. When
-- the change is recorded as a version (or on the next open, after a crash) these rows are
-- deleted in the same transaction.

CREATE TABLE pending_change (
    history_id INTEGER NOT NULL REFERENCES history(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 0),  -- order of application when undoing
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    patch TEXT NOT NULL,
    PRIMARY KEY (history_id, ordinal)
) STRICT, WITHOUT ROWID;
