import { describe, expect, it } from 'vitest';
import { assignIds } from '../messages/ids.js';
import { createConversationBuilder } from '../testing/message-builders.js';
import { commandResultLines } from './command-results.js';

describe('commandResultLines', () => {
  it('keeps what scripts and tests printed as results, not what reads and searches returned', () => {
    const messages = assignIds(
      createConversationBuilder()
        .user('Why does count() return 2?')
        .tools([
          {
            name: 'bash',
            input: { command: 'cat django/db/models/query.py' },
            output: 'def count(self):\n    return 1',
          },
        ])
        .tools([
          {
            name: 'bash',
            input: { command: 'python reproduce.py' },
            output:
              '<returncode>0</returncode>\n<output>\nSQL: SELECT COUNT(*)\nExpected count: 1\nActual count: 2\nmax_y=0.2595 after 26 steps\nextra: 7\nFinished the run.\n</output>',
          },
        ])
        .tools([{ name: 'Grep', input: { pattern: 'count', path: 'src' }, output: 'src/a.py:1: count = 3' }])
        .tools([
          {
            name: 'bash',
            input: { command: './runtests.py aggregation' },
            output: 'Ran 116 tests in 0.358s\n\nOK',
          },
        ])
        .build(),
    );
    expect(commandResultLines(messages)).toEqual([
      'Expected count: 1',
      'Actual count: 2',
      'max_y=0.2595 after 26 steps',
      'Finished the run.',
      'Ran 116 tests in 0.358s',
    ]);
    expect(commandResultLines(messages, { maxKeyValueLines: 0, maxLineChars: 6 })).toEqual([
      'Finish…',
      'Ran 11…',
    ]);
  });

  it('finds nothing in a conversation without commands', () => {
    expect(
      commandResultLines(assignIds(createConversationBuilder().user('hello').assistant('hi').build())),
    ).toEqual([]);
  });
});
