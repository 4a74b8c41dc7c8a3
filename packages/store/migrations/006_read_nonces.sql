-- Signed reads accepted by the API processes of this installation (docs/http.md
-- "Signed reads"): one (key, nonce) pair is accepted once, whichever process
-- receives it, before or after a restart. A row lives until no API process
-- could accept its read any more (`expires_at_ms`: the read's timestamp, plus
-- the freshness window, plus the clock skew allowed between API processes, in
-- unix ms), then any process deletes it. Not part of the projection: a rebuild
-- or a reset leaves it alone.
CREATE TABLE read_nonces (
  key_id         text    NOT NULL CHECK (key_id ~ '^[0-9a-f]{64}$'),
  nonce          text    NOT NULL CHECK (nonce ~ '^[0-9a-f]{32}$'),
  expires_at_ms  bigint  NOT NULL,
  PRIMARY KEY (key_id, nonce)
);
CREATE INDEX read_nonces_expiry ON read_nonces (expires_at_ms);
