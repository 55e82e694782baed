-- Keepsake store, schema version 10: the root scope remembers which version its base value is.
--
-- Pruning folds the oldest versions under the root scope's floor, and compaction later makes a
-- checkpoint at or below the floor the base value, deleting the versions up to it. Until
-- schema 9 nothing said which version the base value held: opening (or reading a version)
-- replayed the versions from the lowest one left, so a damaged b-tree page that hid the lowest
-- folded versions from look-ups made the base value read as the value at the floor, without
-- their changes, and nothing could tell.
--
-- Now the root scope's `base_position` (NULL before; an inner scope's is the version it
-- started from) holds the position of the version the base value is: 0 for the history's
-- initial value, the checkpoint's position after a compaction. The versions left run from just
-- above it. Filled here from the versions each history holds: the base value is the value just
-- below the lowest of them, or at the floor when none is left.

UPDATE scope SET base_position = coalesce(
    (SELECT min(position) - 1 FROM version WHERE version.history_id = scope.history_id), floor)
WHERE level = 0;
