import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toolOutputText } from '../../src/messages/content.js';
import type { Message, Part } from '../../src/messages/types.js';

/** `../shared` beside the repository, where the real sessions and their probes live (absent on some machines). */
export const sharedDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared');
export const sessionsDir = join(sharedDir, 'data', 'sessions');
export const probesDir = join(sharedDir, 'data', 'probes');
export const hasSharedSessions = existsSync(sessionsDir) && existsSync(probesDir);

export interface Probe {
  id: string;
  type: 'recall' | 'artifact' | 'decision' | 'continuation';
  question: string;
  answer: string;
  facts: string[];
  min_facts: number;
  first_offset: number;
}

export function loadProbes(sessionFile: string): Probe[] {
  return JSON.parse(readFileSync(join(probesDir, `${sessionFile}.probes.json`), 'utf8')).probes;
}

/** String leaves of a tool input, raw (not JSON-escaped), as the probe README asks. */
function inputStrings(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) inputStrings(item, out);
  else if (typeof value === 'object' && value !== null)
    for (const item of Object.values(value)) inputStrings(item, out);
  else if (value !== undefined && value !== null) out.push(String(value));
}

/** The text a model would see: every message's text, reasoning, tool inputs (raw) and outputs. */
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
        inputStrings(part.input, pieces);
      } else if (part.type === 'tool-result') pieces.push(toolOutputText(part.output));
    }
  }
  return pieces.join('\n\n');
}

const collapse = (text: string) => text.replace(/\s+/g, ' ');

export interface FactSurvival {
  facts: number;
  kept: number;
  missing: Array<{ probe: string; fact: string }>;
}

/** How many of the probe facts occur verbatim (whitespace-collapsed) in the rendered messages. */
export function factSurvival(probes: readonly Probe[], messages: readonly Message[]): FactSurvival {
  const text = collapse(renderForProbes(messages));
  const result: FactSurvival = { facts: 0, kept: 0, missing: [] };
  for (const probe of probes) {
    for (const fact of probe.facts) {
      result.facts++;
      if (text.includes(collapse(fact))) result.kept++;
      else result.missing.push({ probe: probe.id, fact });
    }
  }
  return result;
}
