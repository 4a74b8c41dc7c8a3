-- The grant rules of ledger-core (GrantRegistry, SPEC.md section 7.2) in the
-- projection, and the paper trail of every grant:
--   * a proposal and a re-authorisation are writes that take effect once
--     k distinct admin principals co-sign them (k per tier, from the genesis
--     grant policy, kept in grant_policy so a restarted projector knows it);
--   * a revocation ends the grant and every grant derived from it;
--   * grant_events holds one row per grant statement, and one per grant an
--     ancestor's revocation ended.
--
-- Rows folded under 001's rules (one co-signature activates, a
-- re-authorisation applies at once, a revocation ends one grant) are not what
-- the new fold gives, and the grants already folded would have no trail. The
-- projection is therefore emptied here, offsets included: the projector
-- refolds the log from offset 0 at its next start, and the tables equal a
-- rebuild again (projectionDigest).
TRUNCATE partition_heads, entries_seen, keys, grants, proposals, pending_approvals, enforcement_records, refusals, refusal_metrics, projector_offsets;

-- The grant whose revocation ended this one: itself, or a revoked ancestor.
ALTER TABLE grants ADD COLUMN revoked_via text NULL;
-- Derived grants by parent, for the cascade of a revocation and the trail.
CREATE INDEX grants_parent ON grants (parent_grant_id) WHERE parent_grant_id IS NOT NULL;

-- The grant policy fixed by genesis (or the defaults when it named none): one row.
CREATE TABLE grant_policy (
  authority_index   bigint      PRIMARY KEY CHECK (authority_index >= 0),
  from_genesis      boolean     NOT NULL,
  cosigners         integer[]   NOT NULL CHECK (cardinality(cosigners) = 5),
  max_lifetime_ms   bigint[]    NOT NULL CHECK (cardinality(max_lifetime_ms) = 5),
  cosign_window_ms  bigint      NOT NULL CHECK (cosign_window_ms > 0)
);

-- The paper trail, in ledger order. A revocation writes one row per grant it
-- ended, all at its authority index; any other statement writes one row.
CREATE TABLE grant_events (
  authority_index   bigint      NOT NULL CHECK (authority_index >= 0),
  grant_id          text        NOT NULL,
  kind              text        NOT NULL CHECK (kind IN ('proposed', 'cosigned', 'reauthorized', 'revoked', 'revoked_via_ancestor')),
  principal         text        NOT NULL,
  key_id            text        NOT NULL,
  statement_hash    text        NOT NULL CHECK (octet_length(statement_hash) = 64 AND statement_hash ~ '^[0-9a-f]*$'),
  -- cosigned: the write it co-signs; reauthorized: the grant's proposal.
  names_hash        text        NULL,
  names_index       bigint      NULL,
  -- proposed: end of the window; reauthorized: the new end it asks for.
  expires_at        timestamptz NULL,
  -- Writes (proposed, reauthorized): the quorum, the co-signing deadline and the co-signers so far.
  cosigners_needed  smallint    NULL,
  cosign_deadline   timestamptz NULL,
  cosigned_by       text[]      NOT NULL,
  -- Writes: the quorum was reached; cosigned: this co-signature reached it; revocations: always.
  took_effect       boolean     NOT NULL,
  effective_at      bigint      NULL,
  -- Revocations: the grant whose revocation this is, and its reason.
  revoked_via       text        NULL,
  reason            text        NULL,
  sequenced_at      timestamptz NOT NULL,
  PRIMARY KEY (authority_index, grant_id),
  CHECK (took_effect = (effective_at IS NOT NULL))
);
CREATE INDEX grant_events_grant ON grant_events (grant_id, authority_index);
-- What a co-signature names: a write, by statement hash.
CREATE INDEX grant_events_writes ON grant_events (statement_hash) WHERE kind IN ('proposed', 'reauthorized');

-- The decisions that cited a grant, for its trail.
CREATE INDEX enforcement_records_grant ON enforcement_records (grant_id, sequenced_at, partition, index) WHERE grant_id IS NOT NULL;
