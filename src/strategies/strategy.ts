import type { ArchiveStore } from '../archive/archive-store.js';
import type { IdentifiedMessage } from '../messages/types.js';
import type { TokenAccountant } from '../tokens/index.js';

/**
 * The contract every compression strategy implements: a pure, synchronous, deterministic function from a
 * conversation and a context to a smaller conversation, the actions it took and the warnings it has. The engine
 * runs strategies cheapest and most faithful first and stops when the budget holds; a strategy never imports an
 * LLM adapter and never touches a preserved message, with one exception a strategy declares
 * (`archivesRequestPreambles`): archiving what a framework put in front of a request (`metadata.requestPart`),
 * never the request itself.
 */
export interface StrategyContext {
  /** Total tokens the conversation should fit in (as counted by `accountant.countConversation`). */
  budgetTokens: number;
  accountant: TokenAccountant;
  /** Where every original that is stubbed, shortened or dropped goes. */
  archive: ArchiveStore;
  /**
   * Ids of messages that must come out byte-identical (system prompt, first task, pinned, recent turns); of a
   * user message with `metadata.requestPart`, its request.
   */
  preservedIds: ReadonlySet<string>;
  /**
   * Set on the engine's last pass, when no weaker preservation is left to try (strict mode, or the weakest one):
   * what a strategy keeps while the engine may still free room elsewhere, it may then give up (the fold renders
   * an existing summary again into less room).
   */
  finalPass?: boolean;
}

export interface StrategyAction {
  /** Kebab-case kind of action, e.g. `stub-tool-output`, `strip-reasoning`, `drop-turn`. */
  type: string;
  strategy: string;
  /** Ids of the messages acted on. */
  messageIds: string[];
  /** Handle of the archived original, when one was archived. */
  handle?: string;
  tokensBefore: number;
  tokensAfter: number;
  description: string;
}

export interface StrategyWarning {
  type: 'strategy-warning';
  strategy: string;
  message: string;
}

export interface StrategyResult {
  /** The new conversation. Unchanged messages are the same objects (and keep their ids). */
  messages: IdentifiedMessage[];
  actions: StrategyAction[];
  warnings: StrategyWarning[];
}

/** What the engine reads of any strategy besides running it. */
interface StrategyDeclaration {
  /** Kebab-case name, e.g. `stub-tool-outputs`. */
  readonly name: string;
  /**
   * True when the strategy may archive what stands in front of a preserved request (the parts before
   * `metadata.requestPart`: an in-context example, harness notes), as `stubDemonstrations` does. The engine then
   * measures the room the task leaves for the recent turns without them. A strategy that wraps another should
   * pass this on. @default false
   */
  readonly archivesRequestPreambles?: boolean;
}

export interface Strategy extends StrategyDeclaration {
  apply(messages: readonly IdentifiedMessage[], context: StrategyContext): StrategyResult;
}

export interface AsyncStrategyContext extends StrategyContext {
  /** Aborts the strategy's I/O (LLM calls) when the caller gives up. */
  abortSignal?: AbortSignal;
}

/**
 * A strategy that needs I/O, such as an LLM summarizer: the same contract, awaited. It runs only under
 * `compactAsync`; it must still never commit a failed result (on failure it returns the messages unchanged
 * with a warning, so the next strategy runs).
 */
export interface AsyncStrategy extends StrategyDeclaration {
  readonly async: true;
  apply(messages: readonly IdentifiedMessage[], context: AsyncStrategyContext): Promise<StrategyResult>;
}

export type AnyStrategy = Strategy | AsyncStrategy;

export function isAsyncStrategy(strategy: AnyStrategy): strategy is AsyncStrategy {
  return (strategy as Partial<AsyncStrategy>).async === true;
}
