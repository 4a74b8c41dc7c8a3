/**
 * Which rules version the structural analysis (commands, paths, tools) is
 * reading for. decide() is synchronous and never re-entered, so classify()
 * sets it once per call before any analysis runs; memos of analysis results
 * are kept per version (a version-2 answer is never served to version 3).
 */
export const analysis = { v3: true };

/** Sets the version the next analyses read for (2 or later). */
export function setAnalysisVersion(rulesVersion: number): void {
  analysis.v3 = rulesVersion >= 3;
}
