-- The same rule as 001's `~ '^[0-9a-f]{64}$'` (64 lowercase hex characters),
-- written so that Postgres checks it without the bounded repetition, which
-- its regex engine evaluates slowly: 64 bytes, each of them a hex digit (a
-- string of 64 ASCII characters is 64 bytes long, and one of 64 bytes whose
-- characters are all ASCII holds 64 characters). Checked on every row
-- `entries_seen` gains, once per applied entry; existing rows are re-checked.
ALTER TABLE entries_seen
  DROP CONSTRAINT entries_seen_hash_check,
  ADD CONSTRAINT entries_seen_hash_check CHECK (octet_length(hash) = 64 AND hash ~ '^[0-9a-f]*$');
ALTER TABLE keys
  DROP CONSTRAINT keys_key_id_check,
  ADD CONSTRAINT keys_key_id_check CHECK (octet_length(key_id) = 64 AND key_id ~ '^[0-9a-f]*$');
ALTER TABLE partition_heads
  DROP CONSTRAINT partition_heads_head_check,
  ADD CONSTRAINT partition_heads_head_check CHECK (octet_length(head) = 64 AND head ~ '^[0-9a-f]*$');
