export { diffBodyStats, parseApplyPatch, parseUnifiedDiff, replacementStats } from './code-change.js';
export {
  buildLedger,
  createdFileKeys,
  createLedger,
  ledgerFileKey,
  maxErrorMessageIds,
} from './create-ledger.js';
export {
  type CommandStatus,
  commandStatuses,
  type FileStatus,
  fileStatuses,
  type Ledger,
  type LedgerCommand,
  type LedgerError,
  type LedgerFile,
  type LedgerFileChange,
  type LedgerReference,
  type LedgerSnapshot,
  type LedgerTestRun,
  unfinishedStatusWords,
} from './ledger-types.js';
export {
  type CommandKind,
  type FileAction,
  type FileActionKind,
  isSubAgentTool,
  normaliseToolName,
  type RecognisedCommand,
  type RecognisedToolCall,
  type RecogniserState,
  recogniseToolCall,
  runsCommand,
} from './recognise-tool-call.js';
export { type FoundReference, type ReferenceKind, referencesIn } from './references.js';
export {
  codeSpan,
  commandLabel,
  errorSourceLabel,
  type RenderLedgerOptions,
  readCodeSpan,
  renderLedger,
} from './render-ledger.js';
export {
  analyzeShellCommand,
  analyzeShellWords,
  type ShellAnalysis,
  type ShellEffect,
  type ShellEffectKind,
  type TestRunner,
  testRunners,
} from './shell-command.js';
export { parseTestSummary, type TestSummary, withoutTestRunHeaders } from './test-summary.js';
export {
  aiderCommitLine,
  aiderOutcomeLine,
  errorLinesOf,
  escapedColourCode,
  exitCodeOf,
  normaliseError,
  packageManagerReportLine,
  rejectedEditErrors,
  shellHookNoiseLine,
  stackFrameLine,
  withoutColours,
} from './tool-output.js';
