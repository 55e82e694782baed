-- Keepsake store, schema version 5: the change held back by debouncing is checked like the
-- rest of the history.
--
-- While the user types, the held change's records live in `pending_change`, rewritten on every
-- keystroke. Until schema 4 nothing checked them: a damaged byte in a held patch that still
-- parsed as JSON became the history's value at the next open, and rows a damaged page lost
-- vanished without a word. Now the history's counters (on its newest version row, or on the
-- history row while it has no version) also hold `held_digest`: XXH64 (as a signed 64-bit
-- integer) of the held rows' count and of each row's path, kind and patch, in order; NULL when
-- nothing is held. Every transaction writes the counters anyway, so a keystroke writes no
-- other page. Opening compares the rows with it: a mismatch, rows without a digest or a digest
-- without rows is damage.
--
-- A store that held a change when it was upgraded gets 0, which no digest takes: those rows
-- were written unchecked and are read unchecked once, when the next open records them.

ALTER TABLE history ADD COLUMN held_digest INTEGER;
ALTER TABLE version ADD COLUMN held_digest INTEGER;

UPDATE history SET held_digest = 0 WHERE id IN (SELECT history_id FROM pending_change);
UPDATE version SET held_digest = 0
WHERE revision IS NOT NULL AND history_id IN (SELECT history_id FROM pending_change);
