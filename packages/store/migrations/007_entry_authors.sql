-- Each applied entry's statement author (its principal), so that an API
-- process tells who may read a statement's status from the same row that
-- locates it (GET /v1/statements/:id), doing the same work whether the
-- statement is the reader's, someone else's or unknown. Filled from the
-- entry, like every other column; rows applied before this migration keep
-- NULL until a rebuild.
ALTER TABLE entries_seen ADD COLUMN author text NULL;
