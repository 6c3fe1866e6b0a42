import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { InvalidArgumentError } from '../../errors/index.js';
import { createO200kCounter } from '../../tokens/index.js';
import { compressProse, elisionMarker } from './compress-prose.js';

const counter = createO200kCounter();

const fillerSentences = [
  'The weather was pleasant for most of the afternoon.',
  'Everyone seemed to be in a fairly good mood today.',
  'It is worth saying that the coffee machine works again.',
  'There was some general chatter about the upcoming holidays.',
  'Nothing much else happened during the rest of the meeting.',
  'People talked about various unrelated topics for a while.',
  'The room was a little warm but otherwise comfortable.',
  'Someone mentioned that lunch would be slightly late.',
];

/** Prose where every sentence is filler except the ones given, placed in the middle. */
function proseAround(...important: string[]): string {
  return [...fillerSentences.slice(0, 4), ...important, ...fillerSentences.slice(4)].join(' ');
}

/** Splitting hazards: a text of five sentences where the hazard sits in the third one, which is dropped or kept whole. */
function hazardText(hazardSentence: string): string {
  return [
    'We started the session by reading the failing test carefully.',
    fillerSentences[0],
    hazardSentence,
    fillerSentences[1],
    fillerSentences[2],
    fillerSentences[3],
    fillerSentences[4],
  ].join(' ');
}

/** Every piece of the output between markers is a run of whole input sentences, so a hazard never splits. */
function expectWholeOrGone(input: string, output: string, hazardSentence: string): void {
  expect(output).not.toBe(input);
  const kept = output.includes(hazardSentence);
  if (!kept) {
    // Not one fragment of it survives on its own.
    const words = hazardSentence.split(' ');
    expect(output).not.toContain(words.slice(-3).join(' '));
    expect(output).not.toContain(words.slice(0, 3).join(' '));
  }
  for (const piece of output.split(elisionMarker)) {
    const trimmed = piece.trim();
    if (trimmed !== '') expect(input).toContain(trimmed);
  }
}

describe('compressProse', () => {
  it('keeps the most informative sentences in order and marks the elided runs', () => {
    const input = proseAround(
      'We decided to use exponential backoff instead of a fixed delay because the API rate-limits bursts.',
      'The run failed with TypeError: cannot read properties of undefined in src/retry/backoff.ts.',
    );
    const output = compressProse(input);
    expect(output).toContain('We decided to use exponential backoff instead of a fixed delay');
    expect(output).toContain('TypeError: cannot read properties of undefined in src/retry/backoff.ts.');
    expect(output).toContain(elisionMarker);
    expect(output.indexOf('We decided')).toBeLessThan(output.indexOf('TypeError'));
    expect(output.length).toBeLessThan(input.length);
  });

  it('prefers decisions, errors and paths over filler of the same length', () => {
    const signals = [
      'We chose the queue because polling wasted several seconds.',
      'The build failed with an exception thrown in the parser.',
      'The handler lives in src/server/routes/upload-handler.ts now.',
    ];
    const input = [...fillerSentences, ...signals, ...fillerSentences.slice(0, 3)].join(' ');
    const output = compressProse(input, { keepRatio: 0.4 });
    for (const signal of signals) expect(output).toContain(signal);
  });

  it('returns three sentences or fewer unchanged', () => {
    const input = 'Sure, here you go. This is filler. Thanks again for asking me about it!';
    expect(compressProse(input, { keepRatio: 0.1 })).toBe(input);
    const codeHeavy = `One sentence.\n\n\`\`\`\n${'a. b. c. d. e. '.repeat(50)}\n\`\`\`\nTwo sentences here. Three.`;
    expect(compressProse(codeHeavy, { keepRatio: 0.1 })).toBe(codeHeavy);
  });

  it('returns the text unchanged with keepRatio 1 and empty text unchanged', () => {
    const input = proseAround('We decided to drop the cache.');
    expect(compressProse(input, { keepRatio: 1 })).toBe(input);
    expect(compressProse('')).toBe('');
  });

  it('rejects a keepRatio outside (0, 1] with a typed error', () => {
    for (const keepRatio of [0, -0.5, 1.5, Number.NaN, '0.5' as unknown as number]) {
      expect(() => compressProse('text', { keepRatio })).toThrow(InvalidArgumentError);
    }
  });

  describe('sentence splitting hazards', () => {
    const hazards = [
      ['abbreviations e.g. and i.e.', 'Use a small library, e.g. ky, i.e. a thin wrapper over fetch here.'],
      ['etc. before lowercase', 'We removed logs, traces, etc. and the build got quicker than before.'],
      ['titles', 'Mr. Smith and Dr. Jones reviewed it with Prof. Lee this morning.'],
      ['vs. and U.S.', 'The U.S. region vs. the EU region showed the same latency overall.'],
      ['decimals and versions', 'Latency went from 3.14 ms to 2.5 ms after upgrading to v1.2.3 today.'],
      ['paths', 'The fix is in src/retry/backoff.ts and ./a/b/c.ts as discussed before.'],
      ['URLs', 'See https://example.com/docs/v2.1/retry.html?x=1.5 for the details.'],
      ['file names', 'Both package.json and tsconfig.build.json point at dist/index.js now.'],
      ['ellipses', 'It hung for a while... and then it finally passed on the retry.'],
      ['unicode ellipsis', 'It hung for a while… and then it finally passed on the retry.'],
      ['inline code', 'Run `node -e "a. B"` with the flag set before the suite.'],
      ['numbered references', 'See Fig. 3 and No. 7 in the design document for the diagram.'],
      ['initials', 'The parser was written by J. R. Hartley and A. B. Smith in their spare time.'],
      ['months', 'It shipped on Jan. 5 and the fix followed on Sept. 12 in the same year.'],
    ] as const;
    for (const [name, sentence] of hazards) {
      it(`does not split ${name}`, () => {
        const input = hazardText(sentence);
        const output = compressProse(input, { keepRatio: 0.3 });
        expectWholeOrGone(input, output, sentence);
      });
    }

    it('keeps a hazard sentence whole when it is the important one', () => {
      const sentence =
        'We decided to pin v1.2.3 because v1.3.0 failed in src/retry/backoff.ts, e.g. on Node 20.';
      const output = compressProse(proseAround(sentence), { keepRatio: 0.5 });
      expect(output).toContain(sentence);
    });

    it('splits at sentence ends after paths, versions, URLs and ellipses', () => {
      const input = [
        'The retry logic was moved to src/retry/backoff.ts.',
        fillerSentences[0],
        'We pinned the client to v1.2.3.',
        fillerSentences[1],
        'The docs are at https://example.com/retry.',
        fillerSentences[2],
        'It hung for a while... Then it passed.',
        fillerSentences[3],
      ].join(' ');
      const output = compressProse(input, { keepRatio: 0.6 });
      // Filler went, and each kept piece is made of whole sentences.
      expect(output).not.toBe(input);
      for (const piece of output.split(elisionMarker)) {
        const trimmed = piece.trim();
        if (trimmed !== '') expect(input).toContain(trimmed);
      }
      expect(output).toContain('src/retry/backoff.ts.');
    });
  });

  describe('Chinese and Japanese prose', () => {
    const sentences = [
      'セッションの最初に失敗したテストを読みました。',
      '天気は午後のほとんどの間とても良かったです。',
      'リトライの間隔は src/retry/backoff.ts で指数関数的にすることに決めました、固定の遅延ではAPIのレート制限にかかるからです。',
      '皆さんはかなり機嫌が良さそうでした。',
      'コーヒーメーカーがまた動くようになりました！',
      '休日の話を少ししましたか？',
      'ビルドは TypeError: cannot read properties of undefined で失敗しました。',
      '会議の残りの時間は特に何もありませんでした。',
    ];

    it('splits at full-width stops, with no space after them, and keeps whole sentences', () => {
      const input = sentences.join('');
      const output = compressProse(input, { keepRatio: 0.5 });
      expect(output).not.toBe(input);
      expect(output).toContain(elisionMarker);
      expect(output).toContain(sentences[0]);
      expect(output).toContain(sentences[6]);
      // Every kept piece is a run of whole sentences.
      for (const piece of output.split(elisionMarker)) {
        if (piece === '') continue;
        expect(input).toContain(piece);
        expect(sentences.some((sentence) => piece.startsWith(sentence))).toBe(true);
        expect(sentences.some((sentence) => piece.endsWith(sentence))).toBe(true);
      }
      expect(compressProse(output, { keepRatio: 0.5 })).toBe(output);
    });

    it('counts sentences at full-width stops: three come back unchanged', () => {
      const input = sentences.slice(0, 3).join('');
      expect(compressProse(input, { keepRatio: 0.1 })).toBe(input);
    });
  });

  describe('structure', () => {
    it('keeps fenced code blocks byte-for-byte: backticks, tildes, long fences, unclosed fences', () => {
      const blocks = [
        '```ts\nconst a = 1. This is not. A sentence.\n```\n',
        '~~~~\nstill code.\n```\nnot the end. Really.\n~~~~\n',
        '````md\n```\ninner fence. Stays.\n```\n````\n',
      ];
      const unclosed = '```python\nprint("never closed. At all.")\nmore code. Here.\n';
      const input = `${proseAround('We decided to keep it.')}\n\n${blocks.join('\n')}\n${proseAround('The test failed.')}\n\n${unclosed}`;
      const output = compressProse(input);
      expect(output).not.toBe(input);
      for (const block of blocks) expect(output).toContain(block);
      expect(output.endsWith(unclosed)).toBe(true);
    });

    it('a closing fence must match the opener character and be at least as long', () => {
      const block = '````\ncode\n```\nstill code. Yes. Indeed. More.\n~~~~\nstill code.\n````\n';
      const input = `${proseAround('We decided to keep it.')}\n\n${block}\n${proseAround('We failed.')}`;
      expect(compressProse(input)).toContain(block);
    });

    it('keeps headings, list markers, indentation and line structure', () => {
      const item = (text: string) => `${text} ${fillerSentences[0]} ${fillerSentences[1]}`;
      const input = [
        '## Findings',
        '',
        proseAround('We decided to retry twice.'),
        '',
        `- ${item('The parser failed on src/parse.ts line 40.')}`,
        `  - ${item('Nested point about the cache in src/cache.ts.')}`,
        `1. ${item('Numbered step that chose the queue because of load.')}`,
        `- [ ] ${item('Open task: fix the error in src/x.ts.')}`,
        '',
        '| a | b. C. D. |',
        '',
        '### Next',
        '',
        fillerSentences.join(' '),
      ].join('\n');
      const output = compressProse(input, { keepRatio: 0.4 });
      const lines = output.split('\n');
      expect(lines).toContain('## Findings');
      expect(lines).toContain('### Next');
      expect(lines).toContain('| a | b. C. D. |');
      expect(output).toMatch(/^- The parser failed on src\/parse\.ts line 40\./m);
      expect(output).toMatch(/^ {2}- Nested point about the cache in src\/cache\.ts\./m);
      expect(output).toMatch(/^1\. Numbered step that chose the queue because of load\./m);
      expect(output).toMatch(/^- \[ \] Open task: fix the error in src\/x\.ts\./m);
      expect(output.length).toBeLessThan(input.length);
    });

    it('joins whole dropped paragraphs into one marker line', () => {
      const important = 'We decided to use the queue because polling failed under load in src/poll.ts.';
      const paragraphs = [important, ...fillerSentences.map((sentence) => `${sentence} ${sentence}`)];
      const output = compressProse(paragraphs.join('\n\n'), { keepRatio: 0.3 });
      expect(output.startsWith(important)).toBe(true);
      const markerLines = output.split('\n').filter((line) => line === elisionMarker);
      expect(markerLines.length).toBeGreaterThanOrEqual(1);
      expect(output).not.toMatch(/\n\n\n/);
    });

    it('keeps hard-wrapped paragraphs wrapped where sentences are kept', () => {
      const input = `We decided to use the queue\nbecause polling failed. ${fillerSentences.join('\n')}`;
      const output = compressProse(input, { keepRatio: 0.3 });
      expect(output.startsWith('We decided to use the queue\nbecause polling failed.')).toBe(true);
    });
  });

  describe('budget', () => {
    it('selects by tokens: the kept prose is within keepRatio plus a small tolerance', () => {
      const sentences: string[] = [];
      for (let index = 0; index < 200; index++) {
        const kind = index % 4;
        sentences.push(
          kind === 0
            ? `Step ${index} touched src/module-${index}/file-${index}.ts and it worked.`
            : kind === 1
              ? `We decided on option ${index} because the alternative was slower.`
              : kind === 2
                ? `General remark number ${index} about the state of things in the project.`
                : `A much longer sentence ${index} that rambles on about many loosely related ideas, several of which have no bearing on the task at hand whatsoever.`,
        );
      }
      const input = sentences.join(' ');
      for (const keepRatio of [0.2, 0.5, 0.8]) {
        const output = compressProse(input, { keepRatio });
        const ratio = counter.count(output) / counter.count(input);
        expect(ratio).toBeLessThanOrEqual(keepRatio + 0.05);
        expect(ratio).toBeGreaterThanOrEqual(keepRatio - 0.15);
      }
    });

    it('is idempotent and never grows on a text with markers left by a first pass', () => {
      const input = proseAround('We decided to retry.', 'It failed in src/a.ts.');
      const once = compressProse(input, { keepRatio: 0.2 });
      expect(once).not.toBe(input);
      expect(compressProse(once, { keepRatio: 0.2 })).toBe(once);
      expect(compressProse(once, { keepRatio: 0.9 })).toBe(once);
    });
  });

  describe('properties', () => {
    const word = fc.constantFrom(
      'the',
      'retry',
      'backoff',
      'src/retry/backoff.ts',
      'e.g.',
      'Mr.',
      '3.14',
      'v1.2.3',
      'failed',
      'because',
      '`parseConfig`',
      'https://example.com/a.b',
      'error',
      'queue',
      'we',
      'decided',
      'cache',
      '...',
      'U.S.',
      'Error:',
    );
    const sentence = fc
      .tuple(
        fc.constantFrom('The', 'We', 'It', 'Then', 'A', 'Sure,', 'Note:'),
        fc.array(word, { minLength: 1, maxLength: 14 }),
        fc.constantFrom('.', '!', '?', '...'),
      )
      .map(([first, words, end]) => `${first} ${words.join(' ')}${end}`);
    const proseLine = fc
      .tuple(
        fc.constantFrom('', '- ', '  * ', '1. ', '> ', '# '),
        fc.array(sentence, { minLength: 1, maxLength: 6 }),
      )
      .map(([prefix, sentences]) => prefix + sentences.join(' '));
    const fence = fc
      .tuple(
        fc.constantFrom('```', '````', '~~~', '~~~~~'),
        fc.constantFrom('', 'ts', 'python'),
        fc.array(fc.oneof(sentence, fc.constantFrom('```', '~~~', '', '  x = 1. Y.')), { maxLength: 5 }),
        fc.boolean(),
      )
      .map(([marker, info, lines, closed]) => {
        // Inner lines that would close the block are left out: the block is then exactly what we generated.
        const inner = lines.filter((line) => !(line[0] === marker[0] && line.length >= marker.length));
        return `${[`${marker}${info}`, ...inner].join('\n')}\n${closed ? marker : ''}`;
      });
    const document = fc
      .array(
        fc.oneof({ weight: 4, arbitrary: proseLine }, { weight: 1, arbitrary: fence }, fc.constant('')),
        {
          minLength: 1,
          maxLength: 14,
        },
      )
      .map((blocks) => blocks.join('\n'));
    const ratio = fc.constantFrom(0.1, 0.3, 0.5, 0.7, 0.9);

    it('never grows, in characters or in tokens', () => {
      fc.assert(
        fc.property(document, ratio, (input, keepRatio) => {
          const output = compressProse(input, { keepRatio });
          expect(output.length).toBeLessThanOrEqual(input.length);
          expect(counter.count(output)).toBeLessThanOrEqual(counter.count(input));
        }),
        { numRuns: propertyRuns(300) },
      );
    });

    it('is idempotent', () => {
      fc.assert(
        fc.property(document, ratio, (input, keepRatio) => {
          const once = compressProse(input, { keepRatio });
          expect(compressProse(once, { keepRatio })).toBe(once);
        }),
        { numRuns: propertyRuns(300) },
      );
    });

    it('keeps every fenced block verbatim', () => {
      const withFences = fc
        .tuple(
          fc.array(proseLine, { minLength: 1, maxLength: 6 }),
          fence,
          fc.array(proseLine, { maxLength: 6 }),
        )
        .map(([before, block, after]) => ({
          text: [...before, '', block, ...after].join('\n'),
          block,
        }));
      fc.assert(
        fc.property(withFences, ratio, ({ text, block }, keepRatio) => {
          expect(compressProse(text, { keepRatio })).toContain(block);
        }),
        { numRuns: propertyRuns(300) },
      );
    });

    it('is deterministic and keeps the original order of what it keeps', () => {
      fc.assert(
        fc.property(document, ratio, (input, keepRatio) => {
          const output = compressProse(input, { keepRatio });
          expect(compressProse(input, { keepRatio })).toBe(output);
          let from = 0;
          for (const piece of output.split(elisionMarker)) {
            const at = input.indexOf(piece.trimEnd(), from);
            expect(at).toBeGreaterThanOrEqual(0);
            from = at;
          }
        }),
        { numRuns: propertyRuns(200) },
      );
    });
  });
});
