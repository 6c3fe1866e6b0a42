import { aiderImporter } from './aider/aider-importer.js';
import { claudeCodeImporter } from './claude-code/claude-code-importer.js';
import { codexImporter } from './codex/codex-importer.js';
import { gptmeImporter } from './gptme/gptme-importer.js';
import { miniSweAgentImporter } from './mini-swe-agent/mini-swe-agent-importer.js';
import { openHandsImporter } from './openhands/openhands-importer.js';
import { anthropicImporter, openAIImporter, precisImporter } from './provider-json/provider-json-importer.js';
import { specStoryImporter } from './specstory/specstory-importer.js';
import { sweAgentImporter } from './swe-agent/swe-agent-importer.js';
import type { TranscriptImporter } from './transcript-importer.js';

/**
 * Every importer, in detection order: agent log formats first (each recognises its own envelope), the plain
 * provider shapes last, since an agent log can also look like a list of chat messages.
 */
export const transcriptImporters: readonly TranscriptImporter[] = [
  claudeCodeImporter,
  codexImporter,
  gptmeImporter,
  miniSweAgentImporter,
  sweAgentImporter,
  openHandsImporter,
  specStoryImporter,
  aiderImporter,
  openAIImporter,
  anthropicImporter,
  precisImporter,
];

/** The plain provider shapes, whose evidence may sit past the detection sample of a large file. */
export const providerJsonImporters: readonly TranscriptImporter[] = [
  openAIImporter,
  anthropicImporter,
  precisImporter,
];
