-- Argument constraints of a grant (SPEC.md section 7.2, rule 7), as signed in
-- its grant.proposed: canonical JSON text of the constraint list, NULL when the
-- grant constrains no argument. Shown in the grant's paper trail.
ALTER TABLE grants ADD COLUMN constraints text NULL;
