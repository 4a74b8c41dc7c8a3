export { initialState, evolve, lifeEntryOf, remember } from './state.js';
export type { LifeState, LifeEntry, LifeStatement, WaitingProposal, OpenConfirmation, RequestFacts, ApprovedRequest, Approval, Answer, FatigueState, OperationFields } from './state.js';
export { decide, firstDecision, finalDecision, DEFAULT_DEADLINES_MS, DEFAULT_CONFIRMATION } from './decide.js';
export type { Said, SaidGroup, LifeCommand, LifeDecision, ConfirmationSettings, FirstDecisionFacts } from './decide.js';
export { judge } from './judge.js';
export { AuthorityHistory } from './authority-history.js';
export type { JudgeContext } from './judge.js';
export { countResponse, counts } from './responses.js';
export type { CountedRequest, CountedResponse, ResponseEffect } from './responses.js';
export { RELEASED_RULES, DEFAULT_RULES_VERSION, rulesFor, withRules, escalationFor } from './rules.js';
export type { RulesSpec, RulesRegistry, Escalation } from './rules.js';
export { REPLAY_WINDOW, ENTRY_LINE_OVERHEAD, admitsProposal, oldestOpenMs } from './window.js';
export type { ReplayLimits } from './window.js';
export {
  DEFAULT_FATIGUE,
  READING_UNIT_BYTES,
  MAX_MIN_READ_MS,
  MAX_SUGGESTED_TIER,
  MAX_SUGGESTED_REQUESTS,
  operationBytes,
  operationKey,
  minimumReadingMs,
  isReadingTime,
} from './fatigue.js';
export type { FatigueSettings } from './fatigue.js';
