/** A kind of tool call the demo's agents make, and how the firewall treats it. */
export interface Scenario {
  readonly name: string;
  readonly weight: number;
  readonly tool: string;
  readonly actionType: string;
  readonly targetResource: string;
  readonly recipient: string;
  readonly scope: string;
  readonly args: Record<string, unknown>;
  readonly query: string;
  readonly tier: 0 | 1 | 2 | 3 | 4;
  readonly risk: number;
  readonly rules: readonly string[];
  /** How the demo resolves it. */
  readonly path: 'allow' | 'grant' | 'block' | 'confirm';
  readonly blockCode?: 'RCE_RISK' | 'CONTEXT_INJECTION' | 'GRANT_BLOCKED' | 'POLICY_VIOLATION' | 'LOOP_DETECTED';
  /** Agent that makes this call (events are keyed by agent). */
  readonly agent: string;
}

/** The demo's mix of tool calls: routine reads, payments under grants, dangerous shell, credential asks. */
export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'list-workspace', weight: 30, agent: 'agent:build-bot', tool: 'shell', actionType: 'shell.exec',
    targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command: 'ls -la /srv/app' },
    query: 'check the build output', tier: 0, risk: 0, rules: [], path: 'allow',
  },
  {
    name: 'read-ticket', weight: 20, agent: 'agent:support-bot', tool: 'http', actionType: 'ticket.read',
    targetResource: 'tickets/4711', recipient: 'none', scope: 'read', args: { method: 'GET', url: 'https://tickets.internal/4711' },
    query: 'summarise the customer ticket', tier: 1, risk: 0.5, rules: ['context.customer_data'], path: 'allow',
  },
  {
    name: 'pay-acme-invoice', weight: 12, agent: 'agent:billing-bot', tool: 'payments', actionType: 'payment.send',
    targetResource: 'payments/vendors/acme', recipient: 'acme-corp', scope: 'invoice:2026-11', args: { amountUsd: 1200, invoice: 'INV-2026-11-042' },
    query: 'pay the November invoice from Acme', tier: 3, risk: 3.5, rules: ['context.financial'], path: 'grant',
  },
  {
    name: 'pay-unknown-vendor', weight: 6, agent: 'agent:billing-bot', tool: 'payments', actionType: 'payment.send',
    targetResource: 'payments/vendors/globex', recipient: 'globex-ltd', scope: 'invoice:2026-11', args: { amountUsd: 98000, invoice: 'GX-77' },
    query: 'settle the outstanding vendor balance', tier: 3, risk: 3.5, rules: ['context.financial'], path: 'confirm',
  },
  {
    name: 'email-customer', weight: 10, agent: 'agent:support-bot', tool: 'email', actionType: 'email.send',
    targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:4711', args: { subject: 'Your refund', body: 'Hello, your refund was issued.' },
    query: 'tell the customer the refund is done', tier: 2, risk: 2, rules: ['behaviour.acts_on_others'], path: 'confirm',
  },
  {
    name: 'force-push', weight: 5, agent: 'agent:deploy-bot', tool: 'shell', actionType: 'shell.exec',
    targetResource: 'repo/payments-service', recipient: 'none', scope: 'main', args: { command: 'git push --force origin main' },
    query: 'publish the hotfix', tier: 3, risk: 3, rules: ['pattern.git_push_force', 'context.production'], path: 'confirm',
  },
  {
    name: 'wipe-database', weight: 4, agent: 'agent:ops-bot', tool: 'shell', actionType: 'shell.exec',
    targetResource: 'host/db-02', recipient: 'none', scope: 'production', args: { command: 'rm -rf /var/lib/postgresql' },
    query: 'free some disk space', tier: 4, risk: 5, rules: ['pattern.recursive_delete', 'context.production'], path: 'block', blockCode: 'RCE_RISK',
  },
  {
    name: 'share-credentials', weight: 4, agent: 'agent:support-bot', tool: 'http', actionType: 'credentials.share',
    targetResource: 'vault/api-keys', recipient: 'external-partner', scope: 'all', args: { method: 'POST', url: 'https://partner.example/keys' },
    query: 'send the partner what they need to integrate', tier: 4, risk: 4.5, rules: ['behaviour.credentials'], path: 'block', blockCode: 'CONTEXT_INJECTION',
  },
  {
    name: 'restart-db-host', weight: 3, agent: 'agent:ops-bot', tool: 'shell', actionType: 'shell.exec',
    targetResource: 'host/db-01', recipient: 'none', scope: 'production', args: { command: 'systemctl restart postgresql' },
    query: 'the database looks slow', tier: 3, risk: 3, rules: ['pattern.systemctl', 'context.production'], path: 'block', blockCode: 'GRANT_BLOCKED',
  },
  {
    name: 'retry-loop', weight: 2, agent: 'agent:build-bot', tool: 'shell', actionType: 'shell.exec',
    targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command: 'npm test' },
    query: 'run the tests again', tier: 1, risk: 1, rules: ['behaviour.repetition'], path: 'block', blockCode: 'LOOP_DETECTED',
  },
];

/** Every agent the demo registers. */
export const DEMO_AGENTS = [...new Set(SCENARIOS.map((s) => s.agent))];

/** A small deterministic PRNG (mulberry32), so a demo's shape repeats for a seed. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks a scenario by weight. */
export function pickScenario(random: () => number): Scenario {
  const total = SCENARIOS.reduce((sum, s) => sum + s.weight, 0);
  let roll = random() * total;
  for (const scenario of SCENARIOS) {
    roll -= scenario.weight;
    if (roll < 0) return scenario;
  }
  return SCENARIOS[0] as Scenario;
}
