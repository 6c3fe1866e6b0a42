import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadProbeFile, type Probe } from '../../src/eval/probes.js';

export { type FactSurvival, factSurvival, renderForProbes } from '../../src/eval/fact-score.js';
export type { Probe } from '../../src/eval/probes.js';

/** `../shared` beside the repository, where the real sessions and their probes live (absent on some machines). */
export const sharedDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared');
export const sessionsDir = join(sharedDir, 'data', 'sessions');
export const probesDir = join(sharedDir, 'data', 'probes');
export const hasSharedSessions = existsSync(sessionsDir) && existsSync(probesDir);

/** The probes of one shared session, by its file name. */
export function loadProbes(sessionFile: string): Probe[] {
  return loadProbeFile(join(probesDir, `${sessionFile}.probes.json`)).probes;
}
