export { Verdict, ScreenFailure, promptHashOf, screenInputProblem } from './screener.js';
export type { Screener, ScreenInput, ScreenResult } from './screener.js';
export { RulesScreener, RULES_SCREENER_MODEL, RCE_RULES } from './rules-screener.js';
export { OpenAICompatibleScreener } from './openai-screener.js';
export type { OpenAICompatibleOptions } from './openai-screener.js';
export { SYSTEM_PROMPT, PROPOSAL_OPEN, PROPOSAL_CLOSE, screeningMessages } from './prompt.js';
export type { ChatMessage } from './prompt.js';
export { screeningPolicy, screeningRefusal, ScreeningOutcome, MAX_CLEARED_TIER, SCREENING_DENIAL_CODE } from './policy.js';
export { screeningStatement } from './statement.js';
