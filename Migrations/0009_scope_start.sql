-- Keepsake store, schema version 9: a scope remembers the version it started from.
--
-- A scope (`pushNewScope()`) starts from the current version. Its versions come after every
-- version of the scopes around it, with the outer scope's undone versions (its redo stack) in
-- between. Until schema 8 nothing said which version it started from. One flipped bit could
-- mark that version undone (`is_undone` 0 to 1), or mark an undone version above it applied,
-- and the rows still had a shape a store can have: opening replayed the scope's versions on a
-- value without that version's change, or with a change the app had undone, and ending the
-- scope deleted the version with the redo stack.
--
-- Now `scope.base_position` holds the position of the version the scope started from (0: the
-- base value). Opening a history and ending a scope check that it is still applied, with
-- nothing applied between it and the scope's versions. It is NULL for the root scope and for
-- scopes started before schema 9, which are read unchecked.

ALTER TABLE scope ADD COLUMN base_position INTEGER CHECK (base_position >= 0);
