import { PrecisError } from '../errors/index.js';
import type { LlmClient, LlmRequest, LlmResponse } from '../llm/llm-client.js';

/** One scripted step: a response, a function computing one from the request, or an error to throw. */
export type ScriptedStep =
  | string
  | LlmResponse
  | { error: unknown }
  | ((request: LlmRequest, callIndex: number) => LlmResponse | string | Promise<LlmResponse | string>);

export interface ScriptedLlmClientOptions {
  /** Steps answered in order. */
  script: ScriptedStep[];
  /** What to do when the script runs out. @default 'throw' */
  whenExhausted?: 'throw' | 'repeat-last';
  /** @default 'scripted:test' */
  id?: string;
}

export interface ScriptedLlmClient extends LlmClient {
  /** Every request received, in order. */
  readonly calls: LlmRequest[];
}

/**
 * A fake `LlmClient` that answers from a script, records what it was asked, and honours abort signals, so
 * code that calls an LLM can be tested without a network or a key.
 */
export function createScriptedLlmClient(options: ScriptedLlmClientOptions): ScriptedLlmClient {
  const { script, whenExhausted = 'throw', id = 'scripted:test' } = options;
  const calls: LlmRequest[] = [];
  return {
    id,
    calls,
    async complete(request) {
      request.abortSignal?.throwIfAborted();
      const callIndex = calls.length;
      calls.push(request);
      let step = script[callIndex];
      if (step === undefined) {
        if (whenExhausted === 'repeat-last' && script.length > 0) step = script[script.length - 1]!;
        else {
          throw new PrecisError(
            'provider-error',
            `scripted LLM client: no step for call ${callIndex + 1} (script has ${script.length})`,
          );
        }
      }
      if (typeof step === 'function') step = await step(request, callIndex);
      if (typeof step === 'string') return { text: step };
      if ('error' in step) throw step.error;
      return step;
    },
  };
}
