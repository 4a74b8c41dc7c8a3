export { verifyBundle } from './verifier.js';
export type { VerifyOptions } from './verifier.js';
export { LedgerFold, foldLineResults } from './fold.js';
export type { FoldOptions } from './fold.js';
export { DEFAULT_REPLAY_LIMITS } from './steps/replay-decisions.js';
export type { ReplayLimits } from './steps/replay-decisions.js';
export { checkLine } from './steps/check-line.js';
export type { VerificationReport, VerificationFailure } from './report.js';
export type { LineResult, EntryResult, CheckpointResult, HeaderResult, TrailerResult, ErrorResult } from './line-result.js';
