import { describe, expect, it } from 'vitest';
import { assignIds } from './ids.js';
import type { Message } from './types.js';

describe('assignIds', () => {
  const conversation: Message[] = [
    { role: 'user', content: 'run the tests' },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: 'run the tests' },
  ];

  it('keeps given ids and derives the rest deterministically', () => {
    const first = assignIds([{ ...conversation[0]!, id: 'mine' }, conversation[1]!]);
    expect(first[0]!.id).toBe('mine');
    expect(first[1]!.id).toMatch(/^m-[0-9a-f]{16}$/);
    expect(assignIds(conversation).map((m) => m.id)).toEqual(assignIds(conversation).map((m) => m.id));
  });

  it('gives repeated content distinct ids that survive dropping an unrelated message', () => {
    const ids = assignIds(conversation).map((m) => m.id);
    expect(new Set(ids).size).toBe(3);
    expect(ids[2]).toBe(`${ids[0]}-1`);
    const withoutMiddle = assignIds([conversation[0]!, conversation[2]!]).map((m) => m.id);
    expect(withoutMiddle).toEqual([ids[0], ids[2]]);
  });

  it('does not depend on key order', () => {
    const a = assignIds([{ role: 'user', content: [{ type: 'text', text: 'x' }] }]);
    const b = assignIds([{ content: [{ text: 'x', type: 'text' }], role: 'user' } as Message]);
    expect(a[0]!.id).toBe(b[0]!.id);
  });

  it('never collides with a given id', () => {
    const derived = assignIds([conversation[1]!])[0]!.id;
    const ids = assignIds([{ role: 'user', content: 'a', id: derived }, conversation[1]!]).map((m) => m.id);
    expect(new Set(ids).size).toBe(2);
  });
});
