/**
 * Which rules version the structural analysis (commands, paths, tools) is
 * reading for. decide() is synchronous and never re-entered, so classify()
 * sets it once per call before any analysis runs; memos of analysis results
 * are kept per version (a version-2 answer is never served to version 3, nor
 * a version-3 answer to version 4, nor a version-4 answer to version 5, nor
 * a version-5 answer to version 6, nor a version-6 answer to version 7, nor a version-7 answer to version 8, nor a version-8 answer to version 9, nor a version-9 answer to version 10, nor a version-10 answer to version 11, nor a version-11 answer to version 12, nor a version-12 answer to version 13).
 */
export const analysis = { v3: true, v4: true, v5: true, v6: true, v7: true, v8: true, v9: true, v10: true, v11: true, v12: true, v13: true };

/** Sets the version the next analyses read for (2 or later). */
export function setAnalysisVersion(rulesVersion: number): void {
  analysis.v3 = rulesVersion >= 3;
  analysis.v4 = rulesVersion >= 4;
  analysis.v5 = rulesVersion >= 5;
  analysis.v6 = rulesVersion >= 6;
  analysis.v7 = rulesVersion >= 7;
  analysis.v8 = rulesVersion >= 8;
  analysis.v9 = rulesVersion >= 9;
  analysis.v10 = rulesVersion >= 10;
  analysis.v11 = rulesVersion >= 11;
  analysis.v12 = rulesVersion >= 12;
  analysis.v13 = rulesVersion >= 13;
}

/** How many per-version memo slots an analysis keeps (versions 2 to 13). */
export const ANALYSIS_SLOTS = 12;

/** Which of the per-version memos an analysis result belongs in: 0 for version 2, 1 for 3, 2 for 4, 3 for 5, 4 for 6, 5 for 7, 6 for 8, 7 for 9, 8 for 10, 9 for 11, 10 for 12, 11 for 13. */
export function analysisSlot(): number {
  return analysis.v13 ? 11 : analysis.v12 ? 10 : analysis.v11 ? 9 : analysis.v10 ? 8 : analysis.v9 ? 7 : analysis.v8 ? 6 : analysis.v7 ? 5 : analysis.v6 ? 4 : analysis.v5 ? 3 : analysis.v4 ? 2 : analysis.v3 ? 1 : 0;
}
