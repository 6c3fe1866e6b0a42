import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { assistantMessage, createConversationBuilder } from '../testing/message-builders.js';
import { inspectConversation } from './inspect-conversation.js';

const bigLog = `FAIL test/retry.test.ts > backoff grows\n${'AssertionError: expected 99 to be >= 100\n'.repeat(20)}`;

describe('inspectConversation', () => {
  const messages = createConversationBuilder()
    .system('You are a coding agent.')
    .user('Fix the flaky retry test.')
    .tools([
      { name: 'bash', input: { command: 'npm test' }, output: bigLog },
      {
        name: 'read_file',
        input: { path: 'src/retry.ts' },
        output: { type: 'error-text', value: 'ENOENT: no such file' },
      },
    ])
    .tools([{ name: 'bash', input: { command: 'npm test' }, output: bigLog }])
    .build();
  messages.push(
    assistantMessage([
      {
        type: 'reasoning',
        text: 'The delay is computed before the jitter is applied, so it can fall short.',
      },
      { type: 'text', text: 'Found it: the jitter is applied after the clamp.' },
    ]),
  );
  const report = inspectConversation({ messages }, { top: 3 });

  it('attributes tokens by role, tool and kind of content', () => {
    expect(report.messageCount).toBe(messages.length);
    expect(report.byRole.tool.messages).toBe(3);
    const bash = report.byTool.find((tool) => tool.toolName === 'bash')!;
    expect([bash.callCount, bash.resultCount, bash.errorCount]).toEqual([2, 2, 0]);
    expect(bash.largestResultTokens).toBe(countTokens(bigLog));
    expect(report.byTool.find((tool) => tool.toolName === 'read_file')!.errorCount).toBe(1);
    expect(report.byTool[0]!.toolName).toBe('bash'); // sorted by tokens
    const reasoning = countTokens(
      'The delay is computed before the jitter is applied, so it can fall short.',
    );
    expect(report.byPartKind.reasoning).toBe(reasoning);
    expect(report.reasoningShare).toBeCloseTo(reasoning / report.contentTokens);
    expect(report.byPartKind.toolResult).toBe(2 * countTokens(bigLog) + countTokens('ENOENT: no such file'));
  });

  it('counts exact repeats of long content as duplicates, once per repeat', () => {
    expect(report.duplicateTokens).toBe(countTokens(bigLog));
    expect(report.duplicateShare).toBeCloseTo(countTokens(bigLog) / report.contentTokens);
  });

  it('lists the largest tool outputs and messages', () => {
    expect(report.largestToolOutputs).toHaveLength(3);
    expect(report.largestToolOutputs[0]).toMatchObject({ toolName: 'bash', index: 3, isError: false });
    expect(report.largestToolOutputs[2]).toMatchObject({ toolName: 'read_file', isError: true });
    expect(report.largestMessages).toHaveLength(3);
    expect(report.messages).toHaveLength(messages.length);
    expect(report.largestMessages[0]!.tokens).toBe(Math.max(...report.messages.map((m) => m.tokens)));
  });

  it('handles an empty conversation', () => {
    const empty = inspectConversation({ messages: [] });
    expect([empty.totalTokens, empty.reasoningShare, empty.duplicateShare]).toEqual([0, 0, 0]);
  });
});
