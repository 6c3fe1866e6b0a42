import { InvalidArgumentError } from '../errors/index.js';
import type { ModelProvider } from './models.js';
import { createO200kCounter } from './o200k-counter.js';
import type { TokenCounter } from './token-counter.js';

/**
 * Starting ratios of a provider's tokens to o200k tokens, for models without a local tokenizer. Guesses to be
 * corrected by `observe()`, erring high because undercounting overflows the window:
 * - anthropic: the Claude vocabulary counts 9-17% more than o200k on agent text (36% on CJK), and estimators
 *   fitted to Claude 4.5 usage add about 10% on top (see the precis ecosystem research, section 5).
 * - google: Gemini's 256k SentencePiece vocabulary is close to o200k on English and code; a small margin.
 * - openai: counted exactly, nothing to correct.
 */
export const initialCalibrationRatios = {
  anthropic: 1.2,
  google: 1.05,
  openai: 1,
} as const satisfies Record<ModelProvider, number>;

export interface CalibrationObservation {
  /** What this counter (through whatever added it up) predicted for a request. */
  estimatedTokens: number;
  /** What the provider reported for the same request (`usage.input_tokens`, `usage.prompt_tokens`). */
  reportedTokens: number;
}

export interface CalibratedCounter extends TokenCounter {
  /** The counter whose counts are scaled. */
  readonly base: TokenCounter;
  /** Current provider tokens per base token. */
  readonly ratio: number;
  /** Observations that moved the ratio so far. */
  readonly observationCount: number;
  /**
   * Moves the ratio toward `ratio × reported / estimated`. Returns false, changing nothing, for samples too
   * small to say anything (fixed per-request overheads dominate them). Throws `InvalidArgumentError` for counts
   * that are not positive finite numbers.
   */
  observe(observation: CalibrationObservation): boolean;
}

export interface CalibratedCounterOptions {
  /** @default createO200kCounter() */
  base?: TokenCounter;
  /** Starting ratio; see `initialCalibrationRatios` for per-provider guesses. @default 1 */
  initialRatio?: number;
  /** Weight of a new observation in the moving average, in (0, 1]. @default 0.3 */
  smoothing?: number;
  /** Observations with fewer estimated or reported tokens than this are ignored. @default 200 */
  minimumSampleTokens?: number;
  /** The ratio never leaves [minimumRatio, maximumRatio], whatever a bad report says. @default 0.5 */
  minimumRatio?: number;
  /** @default 3 */
  maximumRatio?: number;
}

/** True when `counter` scales another counter by a ratio that can change (see `createCalibratedCounter`). */
export function isCalibratedCounter(counter: TokenCounter): counter is CalibratedCounter {
  const candidate = counter as Partial<CalibratedCounter>;
  return typeof candidate.ratio === 'number' && typeof candidate.base?.count === 'function';
}

function requirePositive(option: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidArgumentError(option, `expected a positive finite number, got ${String(value)}`);
  }
}

/**
 * A counter for models with no local tokenizer (Claude, Gemini): `round(base count × ratio)`, with the ratio
 * learned from provider-reported usage as an exponential moving average.
 */
export function createCalibratedCounter(options: CalibratedCounterOptions = {}): CalibratedCounter {
  const {
    base = createO200kCounter(),
    initialRatio = 1,
    smoothing = 0.3,
    minimumSampleTokens = 200,
    minimumRatio = 0.5,
    maximumRatio = 3,
  } = options;
  requirePositive('minimumRatio', minimumRatio);
  requirePositive('maximumRatio', maximumRatio);
  if (minimumRatio > maximumRatio) {
    throw new InvalidArgumentError('minimumRatio', `must not exceed maximumRatio (${maximumRatio})`);
  }
  requirePositive('initialRatio', initialRatio);
  if (initialRatio < minimumRatio || initialRatio > maximumRatio) {
    throw new InvalidArgumentError(
      'initialRatio',
      `expected a number in [${minimumRatio}, ${maximumRatio}], got ${initialRatio}`,
    );
  }
  requirePositive('smoothing', smoothing);
  if (smoothing > 1)
    throw new InvalidArgumentError('smoothing', `expected a number in (0, 1], got ${smoothing}`);
  if (!Number.isFinite(minimumSampleTokens) || minimumSampleTokens < 0) {
    throw new InvalidArgumentError(
      'minimumSampleTokens',
      `expected a non-negative number, got ${minimumSampleTokens}`,
    );
  }

  let ratio = initialRatio;
  let observationCount = 0;
  return {
    encodingName: `${base.encodingName} (calibrated)`,
    base,
    get ratio() {
      return ratio;
    },
    get observationCount() {
      return observationCount;
    },
    count(text: string): number {
      return Math.round(base.count(text) * ratio);
    },
    observe({ estimatedTokens, reportedTokens }: CalibrationObservation): boolean {
      requirePositive('estimatedTokens', estimatedTokens);
      requirePositive('reportedTokens', reportedTokens);
      if (estimatedTokens < minimumSampleTokens || reportedTokens < minimumSampleTokens) return false;
      // The estimate was made at the current ratio, so the base count it stands for is estimated / ratio.
      const sample = (ratio * reportedTokens) / estimatedTokens;
      ratio = Math.min(maximumRatio, Math.max(minimumRatio, ratio + smoothing * (sample - ratio)));
      observationCount++;
      return true;
    },
  };
}
