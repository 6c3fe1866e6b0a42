import type { IdentifiedMessage } from '../../messages/types.js';

/** How much a message matters to the current goal, most important first. */
export const importanceLevels = ['critical', 'high', 'medium', 'low', 'droppable'] as const;
export type ImportanceLevel = (typeof importanceLevels)[number];

/** 0 for `droppable` up to 4 for `critical`: higher is more important. */
export function importanceRank(level: ImportanceLevel): number {
  return importanceLevels.length - 1 - importanceLevels.indexOf(level);
}

export function isImportanceLevel(value: unknown): value is ImportanceLevel {
  return (importanceLevels as readonly unknown[]).includes(value);
}

/** The more important of two levels. */
export function higherLevel(left: ImportanceLevel, right: ImportanceLevel): ImportanceLevel {
  return importanceRank(left) >= importanceRank(right) ? left : right;
}

/** One message's score. */
export interface MessageImportance {
  id: string;
  /** Position of the message in the scored array. */
  index: number;
  level: ImportanceLevel;
  /** Why, in words a person can check: `path src/x.ts referenced by 3 later messages`. */
  reason: string;
  /** Who scored it: the heuristic, the LLM, or a level an earlier run recorded on the message. */
  source: 'heuristic' | 'llm' | 'recorded';
}

/** What a scorer is handed: the whole conversation (for references), the messages to score and the goal. */
export interface ImportanceInput {
  messages: readonly IdentifiedMessage[];
  /** Indexes into `messages` of the messages to score, ascending. */
  candidates: readonly number[];
  goal: string;
}

export interface ImportanceScoring {
  /** One entry per candidate, in candidate order. */
  scores: MessageImportance[];
  /** Shortfalls that did not stop the scoring (an LLM reply that was unusable, so the heuristic scored). */
  warnings: string[];
}

/** The deterministic scorer: synchronous, no I/O. See `createHeuristicImportanceScorer`. */
export interface HeuristicImportanceScorer {
  readonly type: 'heuristic';
  readonly name: string;
  score(input: ImportanceInput): ImportanceScoring;
}

/** Context an LLM scorer needs besides the input: a token counter for batching, and an abort signal. */
export interface LlmScoringContext {
  countTokens(text: string): number;
  abortSignal?: AbortSignal;
}

/** A scorer that asks an LLM. See `createLlmImportanceScorer`. */
export interface LlmImportanceScorer {
  readonly type: 'llm';
  readonly name: string;
  score(input: ImportanceInput, context: LlmScoringContext): Promise<ImportanceScoring>;
}

export type ImportanceScorer = HeuristicImportanceScorer | LlmImportanceScorer;
