-- Keepsake store, schema version 6: a snapshot knows how many property rows it was saved with.
--
-- A snapshot is one `snapshot_property` row per top-level property. A model that gained a
-- property since the snapshot was saved restores without a row for it (the property takes the
-- value the model gives a missing one: `nil`, or the controller's current value), and until
-- schema 5 a row lost to damage (a b-tree page that lost cells) read exactly the same way: an
-- optional property restored as `nil`, without a word. Now `property_count` holds the number of
-- rows saved, and reading fewer (or more) is damage.
--
-- Snapshots saved before get the number of rows they hold when the store is upgraded.

ALTER TABLE snapshot ADD COLUMN property_count INTEGER CHECK (property_count >= 0);

UPDATE snapshot SET property_count = (SELECT count(*) FROM snapshot_property WHERE snapshot_id = snapshot.id);
