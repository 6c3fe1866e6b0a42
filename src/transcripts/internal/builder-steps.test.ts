import { describe, expect, it } from 'vitest';
import { splitTaskTemplate } from './builder-steps.js';

const template = {
  requestStart: /^Solving this issue:\nISSUE:\n/,
  instructionsStart: /\n\n(?=INSTRUCTIONS:\n)/,
};

const joined = (content: ReadonlyArray<{ type: string; text?: string }>) =>
  content.map((part) => part.text ?? '').join('');

describe('splitTaskTemplate', () => {
  it('puts the lead-in, the request and the instructions in parts of their own, joined as the text was', () => {
    const text =
      'Solving this issue:\nISSUE:\nThe cache never expires.\n\nINSTRUCTIONS:\nOne command at a time.\n';
    const split = splitTaskTemplate(text, template)!;
    expect(split.content).toEqual([
      { type: 'text', text: 'Solving this issue:\nISSUE:\n' },
      { type: 'text', text: 'The cache never expires.\n\n' },
      { type: 'text', text: 'INSTRUCTIONS:\nOne command at a time.\n' },
    ]);
    expect(split.metadata).toEqual({ requestPart: 1, expansionPart: 2 });
    expect(joined(split.content)).toBe(text);
  });

  it('marks only what it finds: instructions alone, a lead-in alone', () => {
    const instructionsOnly = splitTaskTemplate('Fix the cache.\n\nINSTRUCTIONS:\nBe brief.', template)!;
    expect(instructionsOnly.metadata).toEqual({ expansionPart: 1 });
    expect(instructionsOnly.content.map((part) => part.type === 'text' && part.text)).toEqual([
      'Fix the cache.\n\n',
      'INSTRUCTIONS:\nBe brief.',
    ]);
    const leadOnly = splitTaskTemplate('Solving this issue:\nISSUE:\nFix the cache.', template)!;
    expect(leadOnly.metadata).toEqual({ requestPart: 1 });
    expect(joined(leadOnly.content)).toBe('Solving this issue:\nISSUE:\nFix the cache.');
  });

  it('leaves a text without the template, or with nothing between its lead-in and instructions, whole', () => {
    expect(splitTaskTemplate('Fix the cache.', template)).toBeUndefined();
    // INSTRUCTIONS: not after a blank line is the user's own word.
    expect(splitTaskTemplate('Fix it.\nINSTRUCTIONS:\nnone', template)).toBeUndefined();
    expect(
      splitTaskTemplate('Solving this issue:\nISSUE:\n \n\nINSTRUCTIONS:\nBe brief.', template),
    ).toBeUndefined();
  });
});
