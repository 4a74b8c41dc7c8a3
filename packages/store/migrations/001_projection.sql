-- The projection of the ledger: every table below is a deterministic fold of
-- the entries (SPEC.md section 5), so a rebuild from offset 0 reproduces it
-- byte for byte. No column defaults to now(), a random id or a sequence.
-- Positions (`partition`, `index`) and authority indexes are bigint because
-- an index may reach 2^53 - 1; hashes are 64 lowercase hex characters.

-- Per ledger partition: how far the projection has verified the chain.
CREATE TABLE partition_heads (
  partition        integer     PRIMARY KEY CHECK (partition >= 0),
  size             bigint      NOT NULL CHECK (size >= 0),
  head             text        NOT NULL CHECK (head ~ '^[0-9a-f]{64}$'),
  -- sequencedAt and authorityIndex of the head entry, for the monotonicity checks.
  sequenced_at     timestamptz NULL,
  authority_index  bigint      NULL,
  -- Set once when the chain does not link; the partition then refuses every apply.
  halted_code      text        NULL,
  halted_index     bigint      NULL,
  halted_message   text        NULL,
  CHECK ((halted_code IS NULL) = (halted_index IS NULL) AND (halted_code IS NULL) = (halted_message IS NULL))
);

-- One row per applied entry: the hash stored for each index decides whether a
-- redelivered entry is the same one (skip) or a different one (halt).
CREATE TABLE entries_seen (
  partition        integer     NOT NULL,
  index            bigint      NOT NULL CHECK (index >= 0),
  hash             text        NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
  statement_hash   text        NOT NULL,
  type             text        NOT NULL,
  sequenced_at     timestamptz NOT NULL,
  authority_index  bigint      NOT NULL,
  PRIMARY KEY (partition, index)
);
CREATE INDEX entries_seen_statement_hash ON entries_seen (statement_hash);

-- The key registry (SPEC.md section 7), folded from partition 0.
CREATE TABLE keys (
  key_id           text        PRIMARY KEY CHECK (key_id ~ '^[0-9a-f]{64}$'),
  principal        text        NOT NULL,
  roles            text[]      NOT NULL,
  registered_at    bigint      NOT NULL,
  revoked_at       bigint      NULL
);
CREATE INDEX keys_principal ON keys (principal);

-- Grants, folded from partition 0. A grant is active once an admin principal
-- other than the proposer cosigns the exact proposal (its statement hash).
CREATE TABLE grants (
  grant_id                 text        PRIMARY KEY,
  agent_id                 text        NOT NULL,
  action_type              text        NOT NULL,
  target_resource          text        NOT NULL,
  recipient                text        NOT NULL,
  scope                    text        NOT NULL,
  not_before               timestamptz NOT NULL,
  expires_at               timestamptz NOT NULL,
  effect                   text        NOT NULL CHECK (effect IN ('allow', 'block')),
  tier                     smallint    NOT NULL,
  parent_grant_id          text        NULL,
  proposal_hash            text        NOT NULL UNIQUE,
  proposed_by              text        NOT NULL,
  proposed_at              bigint      NOT NULL,
  cosigned_by              text        NULL,
  cosigned_at              bigint      NULL,
  status                   text        NOT NULL CHECK (status IN ('proposed', 'active', 'revoked')),
  revoked_at               bigint      NULL,
  reauthorized_expires_at  timestamptz NULL,
  reauthorized_at          bigint      NULL
);
CREATE INDEX grants_agent_status ON grants (agent_id, status);

-- Proposals (proposal.submitted), with the latest classification and decision.
CREATE TABLE proposals (
  proposal_hash    text        PRIMARY KEY,
  agent_id         text        NOT NULL,
  tool             text        NOT NULL,
  action_type      text        NOT NULL,
  target_resource  text        NOT NULL,
  recipient        text        NOT NULL,
  scope            text        NOT NULL,
  partition        integer     NOT NULL,
  index            bigint      NOT NULL,
  sequenced_at     timestamptz NOT NULL,
  tier             smallint    NULL,
  risk             double precision NULL,
  screening        text        NULL,
  status           text        NOT NULL CHECK (status IN ('submitted', 'allow', 'verify_first', 'block', 'deny')),
  UNIQUE (partition, index)
);
CREATE INDEX proposals_agent ON proposals (agent_id, sequenced_at);

-- Human confirmations asked for (confirmation.requested) and their answers.
CREATE TABLE pending_approvals (
  request_hash        text        PRIMARY KEY,
  proposal_hash       text        NOT NULL,
  agent_id            text        NOT NULL,
  tier                smallint    NOT NULL,
  deadline            timestamptz NOT NULL,
  approvals_required  smallint    NOT NULL,
  approved_by         text[]      NOT NULL,
  status              text        NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'timed_out')),
  answered_by         text        NULL,
  answered_index      bigint      NULL,
  partition           integer     NOT NULL,
  index               bigint      NOT NULL,
  UNIQUE (partition, index)
);
CREATE INDEX pending_approvals_open ON pending_approvals (deadline) WHERE status = 'pending';
CREATE INDEX pending_approvals_proposal ON pending_approvals (proposal_hash);

-- One row per decision.recorded.
CREATE TABLE enforcement_records (
  decision_hash    text        PRIMARY KEY,
  proposal_hash    text        NOT NULL,
  agent_id         text        NOT NULL,
  outcome          text        NOT NULL CHECK (outcome IN ('allow', 'verify_first', 'block', 'deny')),
  code             text        NULL,
  tier             smallint    NOT NULL,
  risk             double precision NOT NULL,
  authority_index  bigint      NOT NULL,
  grant_id         text        NULL,
  grant_entry      bigint      NULL,
  partition        integer     NOT NULL,
  index            bigint      NOT NULL,
  sequenced_at     timestamptz NOT NULL,
  UNIQUE (partition, index)
);
CREATE INDEX enforcement_records_proposal ON enforcement_records (proposal_hash, sequenced_at DESC, partition DESC, index DESC);
CREATE INDEX enforcement_records_agent ON enforcement_records (agent_id, sequenced_at DESC, partition DESC, index DESC);
CREATE INDEX enforcement_records_recent ON enforcement_records (sequenced_at DESC, partition DESC, index DESC);

-- Refusals: refusal.recorded (with a proposal) and intake.rejected (with the input hash).
CREATE TABLE refusals (
  statement_hash   text        PRIMARY KEY,
  agent_id         text        NOT NULL,
  proposal_hash    text        NULL,
  input_hash       text        NULL,
  code             text        NOT NULL,
  refusal          text        NOT NULL,
  partition        integer     NOT NULL,
  index            bigint      NOT NULL,
  sequenced_at     timestamptz NOT NULL,
  CHECK ((proposal_hash IS NULL) <> (input_hash IS NULL)),
  UNIQUE (partition, index)
);
CREATE INDEX refusals_proposal ON refusals (proposal_hash) WHERE proposal_hash IS NOT NULL;

-- Refusal counts per code and minute of sequencedAt (a sum: order-independent).
CREATE TABLE refusal_metrics (
  minute           timestamptz NOT NULL,
  code             text        NOT NULL,
  count            bigint      NOT NULL CHECK (count > 0),
  PRIMARY KEY (minute, code)
);

-- Where each source (Kafka topic partition) resumes; written in the same
-- transaction as the rows its records produced.
CREATE TABLE projector_offsets (
  topic            text        NOT NULL,
  partition        integer     NOT NULL CHECK (partition >= 0),
  next_offset      bigint      NOT NULL CHECK (next_offset >= 0),
  PRIMARY KEY (topic, partition)
);
