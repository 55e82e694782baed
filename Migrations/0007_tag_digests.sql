-- Keepsake store, schema version 7: tags are checked like the rest of the history.
--
-- A version's tag (`version.tag`) and a scope's base tag (`scope.base_tag`) are JSON text that
-- `undo(to:)` and `redo(to:)` look for. Until schema 6 nothing checked them: a damaged byte
-- that left valid JSON gave another tag (`"t36"` read as `"t37"`), and undoing to a tag went
-- to a version the app never tagged so. Now each has a digest beside it: XXH64 (as a signed
-- 64-bit integer) of the tag's text and where it belongs (the version's position, or the
-- scope's level); NULL for no tag. Tags written before schema 7 have none, and are read
-- unchecked.

ALTER TABLE version ADD COLUMN tag_digest INTEGER;
ALTER TABLE scope ADD COLUMN base_tag_digest INTEGER;
