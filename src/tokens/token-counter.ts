/**
 * Counts the tokens of a piece of text. Synchronous so it can sit in hot loops; implementations that need a
 * large vocabulary load it on first use rather than on import.
 */
export interface TokenCounter {
  /** Name of the vocabulary the counts are in, e.g. `o200k_base`. */
  readonly encodingName: string;
  count(text: string): number;
}
