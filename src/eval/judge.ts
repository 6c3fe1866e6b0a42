import { InvalidArgumentError } from '../errors/index.js';
import { hashText } from '../internal/hash.js';
import { stableStringify } from '../internal/stable-json.js';
import { type JsonReply, readJsonReply } from '../llm/json-output.js';
import type { LlmClient } from '../llm/llm-client.js';
import { isProviderError } from '../llm/provider-error.js';
import type { JSONObject, Message } from '../messages/types.js';
import { renderForProbes } from './fact-score.js';
import type { Probe } from './probes.js';

/** The six dimensions of Factory's rubric, in the order its study reports them. */
export const judgeDimensions = [
  'accuracy',
  'context-awareness',
  'artifact-trail',
  'completeness',
  'continuity',
  'instruction-following',
] as const;
export type JudgeDimension = (typeof judgeDimensions)[number];

/** One thing the judge scores 0–5; a dimension is the weighted average of its criteria. */
export interface JudgeCriterion {
  /** Unique, used as the key of the judge's JSON reply, e.g. `accuracy.details`. */
  id: string;
  dimension: JudgeDimension;
  /** Relative weight inside its dimension; positive. */
  weight: number;
  /** What a 5 means, as the judge reads it. */
  description: string;
}

/**
 * Criteria for each dimension of Factory's rubric. The study names the dimensions, not their criteria: these
 * spell out what each dimension asks of an answer given after compression.
 */
export const judgeRubric: readonly JudgeCriterion[] = [
  {
    id: 'accuracy.details',
    dimension: 'accuracy',
    weight: 2,
    description:
      'Technical details (file paths, function names, error messages, numbers, ids) are correct per the reference answer.',
  },
  {
    id: 'accuracy.no-invention',
    dimension: 'accuracy',
    weight: 1,
    description: 'Nothing is invented: every claim is supported by the reference answer or the context.',
  },
  {
    id: 'context-awareness.state',
    dimension: 'context-awareness',
    weight: 2,
    description: 'Reflects the state of the work at this point of the session: what is done, what is not.',
  },
  {
    id: 'context-awareness.history',
    dimension: 'context-awareness',
    weight: 1,
    description: 'Draws on this session rather than generic knowledge.',
  },
  {
    id: 'artifact-trail.files',
    dimension: 'artifact-trail',
    weight: 2,
    description: 'Names the files created, modified or read that the question concerns.',
  },
  {
    id: 'artifact-trail.changes',
    dimension: 'artifact-trail',
    weight: 1,
    description: 'Says what changed in those files (functions, lines, settings), where it matters.',
  },
  {
    id: 'completeness.parts',
    dimension: 'completeness',
    weight: 1,
    description: 'Addresses every part of the question.',
  },
  {
    id: 'completeness.reference',
    dimension: 'completeness',
    weight: 2,
    description: 'Covers every key point of the reference answer.',
  },
  {
    id: 'continuity.resume',
    dimension: 'continuity',
    weight: 2,
    description: 'The agent could carry on from this answer without re-reading files or re-running commands.',
  },
  {
    id: 'continuity.decisions',
    dimension: 'continuity',
    weight: 1,
    description: 'Keeps earlier decisions and their reasons instead of reopening them.',
  },
  {
    id: 'instruction-following.question',
    dimension: 'instruction-following',
    weight: 1,
    description: 'Answers the question that was asked, directly.',
  },
  {
    id: 'instruction-following.constraints',
    dimension: 'instruction-following',
    weight: 1,
    description: 'Respects the constraints the user set in the session.',
  },
];

// Verdicts are declared as types, not interfaces: a type literal is a `JSONValue` (an interface lacks the index
// signature), so the compiler checks that what the eval cache stores stays plain JSON.

/** One criterion as the judge scored it. */
export type CriterionScore = {
  id: string;
  dimension: JudgeDimension;
  weight: number;
  /** 0–5, an integer. */
  score: number;
  reason: string;
};

export type RubricScores = {
  /** Weighted average of each dimension's criteria, 0–5. */
  dimensions: Record<JudgeDimension, number>;
  /** Mean of the six dimensions, 0–5. */
  overall: number;
};

/** A probe the judge scored. */
export type ScoredJudgement = RubricScores & {
  status: 'scored';
  /** The answerer's reply to the probe's question. */
  answer: string;
  criteria: CriterionScore[];
  /** Judge calls made (1, or 2 after a retry). */
  attempts: number;
};

/** A probe whose every judge reply was unusable: reported, never given a guessed score. */
export type InvalidJudgement = {
  status: 'invalid';
  answer: string;
  attempts: number;
  /** What was wrong with each reply, one entry per attempt. */
  problems: string[];
};

export type ProbeJudgement = ScoredJudgement | InvalidJudgement;

/** What the judge needs of a probe: never the strategy that produced the context. */
export type JudgedProbe = Pick<Probe, 'type' | 'question' | 'answer'>;

export interface JudgeEvaluateOptions {
  probe: JudgedProbe;
  /** The compressed context, as messages or already rendered (see `renderContext`). */
  context: readonly Message[] | string;
  abortSignal?: AbortSignal;
}

export interface Judge {
  /** Judge model, answerer model and rubric: changes whenever a score could, so it can key a cache. */
  readonly id: string;
  /** Asks the answerer the probe's question over the context, then has the judge score the answer. */
  evaluate(options: JudgeEvaluateOptions): Promise<ProbeJudgement>;
}

export interface CreateJudgeOptions {
  /** Scores the answers. */
  client: LlmClient;
  /** Answers the probes from the compressed context. @default client */
  answerer?: LlmClient;
  /** @default judgeRubric */
  rubric?: readonly JudgeCriterion[];
  /** Judge calls per probe before the reply is reported as invalid: one retry. @default 2 */
  maxAttempts?: number;
  /** @default 800 */
  answerMaxOutputTokens?: number;
  /** @default 1500 */
  judgeMaxOutputTokens?: number;
  /** Sampling temperature of both calls, for repeatable scores. @default 0 */
  temperature?: number;
}

const answererSystem = [
  'You are an AI coding agent resuming a session whose earlier history was compressed.',
  'The conversation so far is given below, as it is in your context now.',
  'Answer the user’s question from that context alone: be specific (exact file paths, names, numbers,',
  'error messages). When the context does not hold the answer, say what is missing instead of guessing.',
].join(' ');

const judgeSystem = [
  'You grade how well an AI coding agent answered a question about its own session after its context was',
  'compressed. You get the question, a reference answer, the agent’s answer, and the compressed context the',
  'agent had. Score every criterion from 0 (fails it entirely) to 5 (fully meets it), as an integer, with a',
  'one-sentence reason. Grade the answer against the reference answer; use the context only to tell whether a',
  'claim beyond the reference is supported. A criterion the question does not touch gets 5 when the answer',
  'does nothing wrong there.',
].join(' ');

/** The conversation as the answerer reads it: a role label over each message's text, tool calls and results. */
export function renderContext(messages: readonly Message[]): string {
  return messages.map((message) => `[${message.role}]\n${renderForProbes([message])}`).join('\n\n');
}

function checkRubric(rubric: readonly JudgeCriterion[]): void {
  const ids = new Set<string>();
  rubric.forEach((criterion, index) => {
    if (!judgeDimensions.includes(criterion.dimension))
      throw new InvalidArgumentError(
        `rubric[${index}].dimension`,
        `expected one of ${judgeDimensions.join(', ')}, got ${JSON.stringify(criterion.dimension)}`,
      );
    if (typeof criterion.id !== 'string' || criterion.id === '' || ids.has(criterion.id))
      throw new InvalidArgumentError(`rubric[${index}].id`, 'expected a non-empty id, unique in the rubric');
    ids.add(criterion.id);
    if (!(Number.isFinite(criterion.weight) && criterion.weight > 0))
      throw new InvalidArgumentError(`rubric[${index}].weight`, `expected a positive number`);
  });
  for (const dimension of judgeDimensions)
    if (!rubric.some((criterion) => criterion.dimension === dimension))
      throw new InvalidArgumentError('rubric', `no criterion for the ${dimension} dimension`);
}

/** The JSON Schema of the judge's reply: `{ "<criterion id>": { "reason": "…", "score": 0-5 } }`. */
export function judgeReplySchema(rubric: readonly JudgeCriterion[] = judgeRubric): JSONObject {
  const entry: JSONObject = {
    type: 'object',
    properties: {
      // Reason first: a model writing left to right then scores after it has argued.
      reason: { type: 'string', minLength: 1 },
      score: { type: 'integer', minimum: 0, maximum: 5 },
    },
    required: ['reason', 'score'],
    additionalProperties: false,
  };
  return {
    type: 'object',
    properties: Object.fromEntries(rubric.map((criterion) => [criterion.id, entry])),
    required: rubric.map((criterion) => criterion.id),
    additionalProperties: false,
  };
}

/**
 * Dimension scores (weighted average of each dimension's criteria) and the overall score (mean of the
 * dimensions) from per-criterion scores.
 *
 * @throws InvalidArgumentError when a criterion of the rubric has no score
 */
export function scoreRubric(
  scores: Readonly<Record<string, number>>,
  rubric: readonly JudgeCriterion[] = judgeRubric,
): RubricScores {
  checkRubric(rubric);
  const dimensions = {} as Record<JudgeDimension, number>;
  for (const dimension of judgeDimensions) {
    let weighted = 0;
    let weights = 0;
    for (const criterion of rubric) {
      if (criterion.dimension !== dimension) continue;
      const score = scores[criterion.id];
      if (typeof score !== 'number' || !Number.isFinite(score))
        throw new InvalidArgumentError(`scores.${criterion.id}`, 'expected a number');
      weighted += criterion.weight * score;
      weights += criterion.weight;
    }
    dimensions[dimension] = weighted / weights;
  }
  const overall =
    judgeDimensions.reduce((sum, dimension) => sum + dimensions[dimension], 0) / judgeDimensions.length;
  return { dimensions, overall };
}

function judgePrompt(
  probe: JudgedProbe,
  answer: string,
  context: string,
  rubric: readonly JudgeCriterion[],
): string {
  return [
    `Question (${probe.type} probe):`,
    probe.question,
    '',
    'Reference answer:',
    probe.answer,
    '',
    'Agent’s answer:',
    answer,
    '',
    'Criteria (score each 0–5):',
    ...rubric.map((criterion) => `- ${criterion.id} (${criterion.dimension}): ${criterion.description}`),
    '',
    '<compressed-context>',
    context,
    '</compressed-context>',
  ].join('\n');
}

/**
 * An LLM answerer and judge in the manner of Factory's probe study. The answerer sees only the compressed
 * context and the question; the judge sees the probe, the answer, the context and the reference answer, never
 * the strategy's name, and scores each criterion 0–5 with a reason as schema-checked JSON. A reply that is
 * not valid is asked for again (`maxAttempts` in all), then reported as `invalid`: a score is never guessed.
 * Errors of the calls themselves (network, HTTP status) are thrown, after the client's own retries.
 *
 * @throws InvalidArgumentError for an unusable rubric or option
 */
export function createJudge(options: CreateJudgeOptions): Judge {
  const {
    client,
    answerer = client,
    rubric = judgeRubric,
    maxAttempts = 2,
    answerMaxOutputTokens = 800,
    judgeMaxOutputTokens = 1500,
    temperature = 0,
  } = options;
  checkRubric(rubric);
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new InvalidArgumentError('maxAttempts', `expected a positive integer, got ${maxAttempts}`);
  const schema = judgeReplySchema(rubric);
  const rubricHash = hashText(stableStringify(rubric), 8);
  const id = `judge=${client.id};answerer=${answerer.id};rubric=${rubricHash}`;

  return {
    id,
    async evaluate({ probe, context, abortSignal }) {
      const contextText = typeof context === 'string' ? context : renderContext(context);
      const signal = abortSignal === undefined ? {} : { abortSignal };
      const reply = await answerer.complete({
        system: `${answererSystem}\n\n<context>\n${contextText}\n</context>`,
        messages: [{ role: 'user', content: probe.question }],
        maxOutputTokens: answerMaxOutputTokens,
        temperature,
        ...signal,
      });
      const answer = reply.text.trim();
      const prompt = judgePrompt(probe, answer, contextText, rubric);
      const problems: string[] = [];
      for (let attempt = 1; attempt <= maxAttempts; attempt++) {
        let read: JsonReply;
        try {
          const response = await client.complete({
            system: judgeSystem,
            messages: [{ role: 'user', content: prompt }],
            jsonSchema: schema,
            maxOutputTokens: judgeMaxOutputTokens,
            temperature,
            ...signal,
          });
          read = readJsonReply(response, schema);
        } catch (error) {
          // An unusable reply is the judge's failure to answer, retried like any other invalid reply.
          if (!(isProviderError(error) && error.kind === 'invalid-output')) throw error;
          read = { ok: false, problem: error.message };
        }
        if (!read.ok) {
          problems.push(read.problem);
          continue;
        }
        const reply = read.value as Record<string, { reason: string; score: number }>;
        const criteria = rubric.map(
          (criterion): CriterionScore => ({
            id: criterion.id,
            dimension: criterion.dimension,
            weight: criterion.weight,
            score: reply[criterion.id]!.score,
            reason: reply[criterion.id]!.reason,
          }),
        );
        const scores = scoreRubric(
          Object.fromEntries(criteria.map((criterion) => [criterion.id, criterion.score])),
          rubric,
        );
        return { status: 'scored', answer, ...scores, criteria, attempts: attempt };
      }
      return { status: 'invalid', answer, attempts: maxAttempts, problems };
    },
  };
}

/** Judge results of many probes: how many were scored, and the mean scores over the scored ones. */
export interface JudgeSummary {
  scored: number;
  /** Probes whose judge replies were all invalid. */
  invalid: number;
  /** Probes whose calls failed (network, provider errors): neither scored nor invalid. */
  failed: number;
  /** Mean overall score of the scored probes, 0–5; 0 when none was scored. */
  overall: number;
  dimensions: Record<JudgeDimension, number>;
}

/** The verdicts on these probes (probe results of a run, say), leaving out the probes no judge has seen. */
export function judgementsOf<Judgement>(probes: ReadonlyArray<{ judge?: Judgement }>): Judgement[] {
  return probes.flatMap((probe) => (probe.judge === undefined ? [] : [probe.judge]));
}

/** Sums judgements: means over the scored ones only, so an invalid reply never counts as a 0. */
export function summarizeJudgements(
  judgements: ReadonlyArray<ProbeJudgement | { status: 'failed' }>,
): JudgeSummary {
  const scored = judgements.filter(
    (judgement): judgement is ScoredJudgement => judgement.status === 'scored',
  );
  const mean = (values: number[]) =>
    values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
  return {
    scored: scored.length,
    invalid: judgements.filter((judgement) => judgement.status === 'invalid').length,
    failed: judgements.filter((judgement) => judgement.status === 'failed').length,
    overall: mean(scored.map((judgement) => judgement.overall)),
    dimensions: Object.fromEntries(
      judgeDimensions.map((dimension) => [
        dimension,
        mean(scored.map((judgement) => judgement.dimensions[dimension])),
      ]),
    ) as Record<JudgeDimension, number>,
  };
}
