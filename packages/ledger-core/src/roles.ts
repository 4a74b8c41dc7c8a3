/**
 * Roles a registered key can hold. Root keys are not registered: they live in
 * the pinned trust root and sign only the genesis statement.
 */
export const Role = {
  admin: 'admin',
  approver: 'approver',
  agent: 'agent',
  service: 'service',
  sequencer: 'sequencer',
} as const;

/** One of {@link Role}. */
export type Role = (typeof Role)[keyof typeof Role];

/** Every role, in a fixed order (used by schemas). */
export const ROLES = Object.values(Role) as [Role, ...Role[]];
