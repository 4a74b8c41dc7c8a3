import { COMMAND_RULES, ruleIndex } from './command-rules.js';

/**
 * An empty array with room for 16 elements, for scratch lists emptied by
 * popping: V8 gives an array's store back when it is popped to empty from
 * the capacity a first push gives (17), and the next push allocates a new
 * one; a store of 16 made by a literal is kept.
 */
export function emptyScratch<T>(fill: T): T[] {
  const list = [fill, fill, fill, fill, fill, fill, fill, fill, fill, fill, fill, fill, fill, fill, fill, fill];
  while (list.length > 0) list.pop();
  return list;
}

/**
 * The rules of version 2 that fired on one input, by index into
 * COMMAND_RULES, in the order they first fired. Cheap to build, kept (frozen
 * as an array) in the memos of the analyses.
 */
export class Findings {
  readonly #seen = new Uint8Array(COMMAND_RULES.length);
  readonly list: number[] = emptyScratch(0);

  add(index: number): void {
    if (this.#seen[index] === 1) return;
    this.#seen[index] = 1;
    this.list.push(index);
  }

  has(index: number): boolean {
    return this.#seen[index] === 1;
  }

  addAll(indexes: readonly number[]): void {
    // Indexed: the lists are often frozen (memo values), which for-of reads through an iterator object.
    for (let i = 0; i < indexes.length; i++) this.add(indexes[i] as number);
  }

  /** Empties the set (for a scratch instance reused across calls). */
  reset(): void {
    // Popped one by one: `length = 0` would drop the array's store, and the next add allocate a new one.
    const list = this.list;
    while (list.length > 0) this.#seen[list.pop() as number] = 0;
  }
}

/** Indexes of every rule, by a short name used in the analyses (checked at load). */
export const R = {
  rootDelete: ruleIndex('destructive.root_delete'),
  disk: ruleIndex('destructive.disk'),
  forkBomb: ruleIndex('destructive.fork_bomb'),
  recursiveDelete: ruleIndex('destructive.recursive_delete'),
  systemDelete: ruleIndex('destructive.system_delete'),
  secureDelete: ruleIndex('destructive.secure_delete'),
  gitHistory: ruleIndex('destructive.git_history'),
  cluster: ruleIndex('destructive.cluster'),
  cloudDelete: ruleIndex('destructive.cloud'),
  serviceStop: ruleIndex('destructive.service_stop'),
  shutdown: ruleIndex('destructive.shutdown'),
  container: ruleIndex('destructive.container'),
  database: ruleIndex('destructive.database'),
  structuredDestructive: ruleIndex('destructive.structured'),
  scaleToZero: ruleIndex('destructive.scale_to_zero'),
  upload: ruleIndex('exfiltration.upload'),
  cloudUpload: ruleIndex('exfiltration.cloud_upload'),
  reverseShell: ruleIndex('exfiltration.reverse_shell'),
  fetch: ruleIndex('network.fetch'),
  rawSocket: ruleIndex('network.raw_socket'),
  shellStartup: ruleIndex('persistence.shell_startup'),
  scheduled: ruleIndex('persistence.scheduled'),
  ssh: ruleIndex('persistence.ssh'),
  gitHook: ruleIndex('persistence.git_hook'),
  service: ruleIndex('persistence.service'),
  sudo: ruleIndex('privilege.sudo'),
  setuid: ruleIndex('privilege.setuid'),
  capabilities: ruleIndex('privilege.capabilities'),
  containerEscape: ruleIndex('privilege.container_escape'),
  mountChroot: ruleIndex('privilege.mount_chroot'),
  sudoersPam: ruleIndex('privilege.sudoers_pam'),
  accounts: ruleIndex('privilege.accounts'),
  worldWritable: ruleIndex('privilege.world_writable'),
  chownRoot: ruleIndex('privilege.chown_root'),
  kernel: ruleIndex('privilege.kernel'),
  credentialFile: ruleIndex('credential.file'),
  credentialStore: ruleIndex('credential.store'),
  metadata: ruleIndex('credential.cloud_metadata'),
  credentialSearch: ruleIndex('credential.search'),
  credentialWrite: ruleIndex('credential.write'),
  environmentDump: ruleIndex('credential.environment'),
  remotePipeShell: ruleIndex('supply_chain.remote_pipe_shell'),
  remoteInstall: ruleIndex('supply_chain.remote_install'),
  packageConfig: ruleIndex('supply_chain.package_config'),
  downloadExec: ruleIndex('supply_chain.download_exec'),
  loader: ruleIndex('injection.loader'),
  pathHijack: ruleIndex('injection.path_hijack'),
  injectionEnv: ruleIndex('injection.environment'),
  alias: ruleIndex('injection.alias'),
  gitConfig: ruleIndex('injection.git_config'),
  history: ruleIndex('evasion.history'),
  logging: ruleIndex('evasion.logging'),
  securityTools: ruleIndex('evasion.security_tools'),
  crontabRemove: ruleIndex('evasion.crontab_remove'),
  killInit: ruleIndex('evasion.kill_init'),
  attributes: ruleIndex('evasion.attributes'),
  offensiveTool: ruleIndex('discovery.offensive_tool'),
  networkScan: ruleIndex('discovery.network_scan'),
  ledgerFiles: ruleIndex('self.ledger_files'),
  ledgerTamper: ruleIndex('self.ledger_tamper'),
  ledgerCli: ruleIndex('self.ledger_cli'),
  systemWrite: ruleIndex('system.write'),
  pipeToShell: ruleIndex('execution.pipe_to_shell'),
  inlineCode: ruleIndex('execution.inline_code'),
  parseFailure: ruleIndex('uninspectable.parse_failure'),
  indirection: ruleIndex('uninspectable.indirection'),
  eval: ruleIndex('uninspectable.eval'),
  decoded: ruleIndex('uninspectable.decoded_payload'),
  procSubst: ruleIndex('uninspectable.process_substitution'),
  depth: ruleIndex('uninspectable.depth'),
  moneyLow: ruleIndex('money.amount_low'),
  moneyMedium: ruleIndex('money.amount_medium'),
  moneyHigh: ruleIndex('money.amount_high'),
  // Version 4.
  resourceHijacking: ruleIndex('impact.resource_hijacking'),
  paymentCommand: ruleIndex('money.payment_command'),
  // Version 5.
  publicExposure: ruleIndex('exfiltration.public_exposure'),
  keyCreation: ruleIndex('credential.key_creation'),
  remoteCommand: ruleIndex('execution.remote_command'),
  sqlUnbounded: ruleIndex('destructive.sql_unbounded'),
  cryptoTransfer: ruleIndex('money.crypto_transfer'),
  ciWorkflow: ruleIndex('supply_chain.ci_workflow'),
  dependencySource: ruleIndex('supply_chain.dependency_source'),
  localExploit: ruleIndex('privilege.local_exploit'),
  controlPlane: ruleIndex('privilege.control_plane'),
  dataEncrypted: ruleIndex('impact.data_encrypted'),
  secretInMessage: ruleIndex('exfiltration.secret_in_message'),
  // Version 6.
  databaseProgram: ruleIndex('execution.database_program'),
  databaseGrant: ruleIndex('privilege.database_grant'),
  repositoryAuthority: ruleIndex('privilege.repository_authority'),
  fileAttachment: ruleIndex('exfiltration.file_attachment'),
  bulkMessage: ruleIndex('exfiltration.bulk_message'),
  productionShell: ruleIndex('execution.production_shell'),
  infrastructureDestroy: ruleIndex('destructive.infrastructure'),
  // Version 7.
  deferredPayload: ruleIndex('persistence.deferred_payload'),
  transportTrust: ruleIndex('injection.transport_trust'),
  lockfileEdit: ruleIndex('supply_chain.lockfile_edit'),
  buildSource: ruleIndex('supply_chain.build_source'),
  ipLiteral: ruleIndex('network.ip_literal'),
  systemAutomation: ruleIndex('execution.system_automation'),
  editorEscape: ruleIndex('execution.editor_escape'),
  productionCommand: ruleIndex('context.production_command'),
  // Version 8.
  registryAuthority: ruleIndex('supply_chain.registry_authority'),
  remoteRedirect: ruleIndex('exfiltration.remote_redirect'),
  lifecycleScript: ruleIndex('supply_chain.lifecycle_script'),
  captureUrl: ruleIndex('exfiltration.capture_url'),
  secretArgument: ruleIndex('exfiltration.secret_argument'),
  remoteRunner: ruleIndex('supply_chain.remote_runner'),
  typosquat: ruleIndex('supply_chain.typosquat'),
  // Version 9.
  appStatement: ruleIndex('destructive.app_statement'),
  databaseProtection: ruleIndex('evasion.database_protection'),
  argumentPayload: ruleIndex('injection.argument_payload'),
  agentInstructions: ruleIndex('persistence.agent_instructions'),
  hookBypass: ruleIndex('evasion.hook_bypass'),
  infrastructureExposure: ruleIndex('exfiltration.infrastructure_exposure'),
  personalData: ruleIndex('exfiltration.personal_data'),
  externalPlugin: ruleIndex('execution.external_plugin'),
  // Version 10.
  backupDestroy: ruleIndex('impact.backup_destroy'),
  accountGovernance: ruleIndex('impact.account_governance'),
  computeBurst: ruleIndex('impact.compute_burst'),
  dnsChange: ruleIndex('impact.dns_change'),
  agentConfig: ruleIndex('persistence.agent_config'),
  platformProtection: ruleIndex('evasion.platform_protection'),
  webShell: ruleIndex('persistence.web_shell'),
  mailForwarding: ruleIndex('collection.mail_forwarding'),
  phishingMessage: ruleIndex('impact.phishing_message'),
  discount: ruleIndex('money.discount'),
  // Version 11.
  identityAdmin: ruleIndex('privilege.identity_admin'),
  identitySpoofing: ruleIndex('evasion.identity_spoofing'),
  securityWeakening: ruleIndex('injection.security_weakening'),
  codeLeak: ruleIndex('exfiltration.code_leak'),
  publicPost: ruleIndex('impact.public_post'),
  cardIssuance: ruleIndex('money.card_issuance'),
  // Version 12.
  retentionBypass: ruleIndex('impact.retention_bypass'),
} as const;
