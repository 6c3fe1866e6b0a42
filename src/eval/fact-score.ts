import { stringValues } from '../internal/json-strings.js';
import { toolOutputText } from '../messages/content.js';
import type { Message, Part } from '../messages/types.js';
import { type Probe, type ProbeType, probeTypes } from './probes.js';

/**
 * The text the next model call would see, as the probe format's scoring rule reads it: every message's text
 * and reasoning, each tool call's name and the raw string values of its input, and tool outputs, joined by
 * blank lines. Role labels are left out: facts never span message boundaries.
 */
export function renderForProbes(messages: readonly Message[]): string {
  const pieces: string[] = [];
  for (const message of messages) {
    if (typeof message.content === 'string') {
      pieces.push(message.content);
      continue;
    }
    for (const part of message.content as readonly Part[]) {
      if (part.type === 'text' || part.type === 'reasoning') pieces.push(part.text);
      else if (part.type === 'tool-call') {
        pieces.push(part.toolName);
        // Raw (not JSON-escaped), as the probe format asks; other scalars as text.
        pieces.push(...stringValues(part.input, { scalarsAsText: true }));
      } else if (part.type === 'tool-result') pieces.push(toolOutputText(part.output));
    }
  }
  return pieces.join('\n\n');
}

/** Runs of whitespace collapsed to one space, on both sides of a match (the format's `norm`). */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ');
}

export interface ProbeResult {
  id: string;
  type: ProbeType;
  passed: boolean;
  /** Facts found in the context. */
  factsKept: number;
  /** Facts the probe has. */
  facts: number;
  minFacts: number;
  firstOffset: number;
  /** The facts not found, verbatim. */
  missing: string[];
}

/** Passed out of total probes, and kept out of total facts, for one slice of the probes. */
export interface ProbeTally {
  passed: number;
  probes: number;
  /** `passed / probes`; 0 for no probes. */
  passRate: number;
  factsKept: number;
  facts: number;
  /** `factsKept / facts`; 0 for no facts. */
  factSurvival: number;
}

/** Where a probe's earliest fact sits in the session: the format's suggested buckets. */
export const offsetBuckets = ['<0.35', '0.35-0.7', '>=0.7'] as const;
export type OffsetBucket = (typeof offsetBuckets)[number];

export function offsetBucketOf(firstOffset: number): OffsetBucket {
  if (firstOffset < 0.35) return '<0.35';
  return firstOffset < 0.7 ? '0.35-0.7' : '>=0.7';
}

export interface ProbeScore {
  probes: ProbeResult[];
  total: ProbeTally;
  byType: Record<ProbeType, ProbeTally>;
  byOffset: Record<OffsetBucket, ProbeTally>;
}

function emptyTally(): ProbeTally {
  return { passed: 0, probes: 0, passRate: 0, factsKept: 0, facts: 0, factSurvival: 0 };
}

function addToTally(tally: ProbeTally, result: Pick<ProbeResult, 'passed' | 'factsKept' | 'facts'>): void {
  tally.probes++;
  if (result.passed) tally.passed++;
  tally.factsKept += result.factsKept;
  tally.facts += result.facts;
  tally.passRate = tally.passed / tally.probes;
  tally.factSurvival = tally.facts === 0 ? 0 : tally.factsKept / tally.facts;
}

/** Sums tallies (e.g. of several sessions); rates are recomputed from the sums, not averaged. */
export function sumTallies(tallies: readonly ProbeTally[]): ProbeTally {
  const sum = emptyTally();
  for (const tally of tallies) {
    sum.passed += tally.passed;
    sum.probes += tally.probes;
    sum.factsKept += tally.factsKept;
    sum.facts += tally.facts;
  }
  sum.passRate = sum.probes === 0 ? 0 : sum.passed / sum.probes;
  sum.factSurvival = sum.facts === 0 ? 0 : sum.factsKept / sum.facts;
  return sum;
}

function tallyRecord<K extends string>(keys: readonly K[]): Record<K, ProbeTally> {
  return Object.fromEntries(keys.map((key) => [key, emptyTally()])) as Record<K, ProbeTally>;
}

/** Scores probes against already rendered text (see `renderForProbes`). */
export function scoreProbesInText(probes: readonly Probe[], text: string): ProbeScore {
  const haystack = collapseWhitespace(text);
  const score: ProbeScore = {
    probes: [],
    total: emptyTally(),
    byType: tallyRecord(probeTypes),
    byOffset: tallyRecord(offsetBuckets),
  };
  for (const probe of probes) {
    const missing = probe.facts.filter((fact) => !haystack.includes(collapseWhitespace(fact)));
    const factsKept = probe.facts.length - missing.length;
    const result: ProbeResult = {
      id: probe.id,
      type: probe.type,
      passed: factsKept >= probe.minFacts,
      factsKept,
      facts: probe.facts.length,
      minFacts: probe.minFacts,
      firstOffset: probe.firstOffset,
      missing,
    };
    score.probes.push(result);
    addToTally(score.total, result);
    addToTally(score.byType[probe.type], result);
    addToTally(score.byOffset[offsetBucketOf(probe.firstOffset)], result);
  }
  return score;
}

/**
 * Scores probes against a (compressed) conversation by the format's rule: a probe passes when at least
 * `minFacts` of its facts occur verbatim in the rendered context, whitespace collapsed on both sides,
 * case-sensitive.
 */
export function scoreProbes(probes: readonly Probe[], messages: readonly Message[]): ProbeScore {
  return scoreProbesInText(probes, renderForProbes(messages));
}

export interface FactSurvival {
  facts: number;
  kept: number;
  missing: Array<{ probe: string; fact: string }>;
}

/** How many of the probes' facts occur verbatim (whitespace-collapsed) in the rendered messages. */
export function factSurvival(probes: readonly Probe[], messages: readonly Message[]): FactSurvival {
  const score = scoreProbes(probes, messages);
  return {
    facts: score.total.facts,
    kept: score.total.factsKept,
    missing: score.probes.flatMap((result) => result.missing.map((fact) => ({ probe: result.id, fact }))),
  };
}
