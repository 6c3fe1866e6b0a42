// Types for importer-inputs.mjs. Every builder takes a `scale`: 1 (the default) is the size the unit test
// reads, 2 doubles every count and length, so the bench can tell linear parsing from quadratic.

/** 300 aider sessions of 10 SEARCH/REPLACE edits each (3000 calls), then a 1.5 MB fenced line. */
export function aiderLarge(scale?: number): string;
/** One repeated unit of `aiderPathological`: a fence, a SEARCH marker and thinking tags, none closed. */
export const aiderUnclosedBlock: string;
/** An aider prompt followed by 15,000 `aiderUnclosedBlock`s. */
export function aiderPathological(scale?: number): string;

/** One JSONL line of a Claude Code record with the envelope fields the real files carry. */
export function claudeCodeRecord(fields: Record<string, unknown>): string;
/** A Claude Code session: a prompt, then 5000 Read calls and results; the first result is 2 MB. */
export function claudeCodeLarge(scale?: number): string;

/** A Codex rollout of 3000 user steps with a shell call each, then one call whose output is 2 MB. */
export function codexLarge(scale?: number): string;

/** A gptme log of 2000 fenced commands and their results, then one message of 50,000 fences. */
export function gptmeLarge(scale?: number): string;

/** A mini-swe-agent trajectory with 200,000 unclosed fences and a 3 MB thought and observation. */
export function miniSweAgentLarge(scale?: number): string;

/** An OpenHands dump with a 2 MB parameter and observation, then a call of 200,000 unclosed parameters. */
export function openHandsLarge(scale?: number): string;

/** An OpenAI Chat request of 10,000 short messages and a 2 MB last one. */
export function providerJsonLarge(scale?: number): string;

/** A SpecStory export of 4000 fenced commands with their output, then a 1.5 MB fence. */
export function specStoryLarge(scale?: number): string;
/** One repeated unit of `specStoryPathological`: a fence and three tags, none closed. */
export const specStoryUnclosedUnit: string;
/** A SpecStory prompt and answer header followed by 20,000 `specStoryUnclosedUnit`s. */
export function specStoryPathological(scale?: number): string;

/** A SWE-agent trajectory with 100,000 fence lines before its command and a 2 MB observation. */
export function sweAgentLarge(scale?: number): string;
