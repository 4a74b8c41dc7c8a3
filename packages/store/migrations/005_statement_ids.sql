-- Each applied entry's statement id, so any API process can tell a client
-- where a statement it did not accept itself was sequenced
-- (GET /v1/statements/:id). Filled from the entry, like every other column;
-- rows applied before this migration keep NULL until a rebuild.
ALTER TABLE entries_seen ADD COLUMN statement_id text NULL;
CREATE INDEX entries_seen_statement_id ON entries_seen (statement_id) WHERE statement_id IS NOT NULL;
