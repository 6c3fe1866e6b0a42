/**
 * Finds where JSON text first goes wrong. Node 20's `JSON.parse` often names no position ("Unexpected token
 * ']', ..."), so we re-scan the text to point at the offending character. Only called after a parse failed,
 * so it favours clarity over speed; iterative, so deep nesting cannot overflow the stack.
 */
export interface JsonErrorLocation {
  offset: number;
  reason: string;
}

const whitespace = new Set([' ', '\t', '\n', '\r']);

export function locateJsonError(text: string): JsonErrorLocation | undefined {
  let i = 0;
  // What the scanner expects next, innermost last: 'value', or a container state.
  const stack: Array<'array-first' | 'array-next' | 'object-first' | 'object-next' | 'object-value'> = [];
  const skipSpace = () => {
    while (i < text.length && whitespace.has(text[i]!)) i++;
  };
  const fail = (expected: string): JsonErrorLocation =>
    i >= text.length
      ? { offset: text.length, reason: `unexpected end of input, expected ${expected}` }
      : { offset: i, reason: `unexpected ${JSON.stringify(text[i])}, expected ${expected}` };

  const scanString = (): JsonErrorLocation | undefined => {
    i++; // opening quote
    while (i < text.length) {
      const char = text[i]!;
      if (char === '"') {
        i++;
        return undefined;
      }
      if (char === '\\') {
        const escaped = text[i + 1];
        if (escaped === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            i += 2;
            return fail('four hex digits after \\u');
          }
          i += 6;
        } else if (escaped !== undefined && '"\\/bfnrt'.includes(escaped)) i += 2;
        else {
          i++;
          return fail('a valid escape character');
        }
      } else if (char < ' ') return fail('no raw control character inside a string (escape it)');
      else i++;
    }
    return fail('a closing quote');
  };

  const scanScalar = (): JsonErrorLocation | undefined => {
    const number = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (number && number[0].length > 0) {
      i += number[0].length;
      return undefined;
    }
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return undefined;
      }
    }
    return fail('a value');
  };

  // Scans one value; containers push a state and return so the loop below continues inside them.
  const scanValue = (): JsonErrorLocation | undefined => {
    skipSpace();
    const char = text[i];
    if (char === '{') {
      i++;
      stack.push('object-first');
      return undefined;
    }
    if (char === '[') {
      i++;
      stack.push('array-first');
      return undefined;
    }
    if (char === '"') return scanString();
    return scanScalar();
  };

  let error = scanValue();
  while (error === undefined && stack.length > 0) {
    skipSpace();
    const state = stack[stack.length - 1]!;
    const char = text[i];
    if (state === 'array-first' || state === 'array-next') {
      if (char === ']') {
        i++;
        stack.pop();
      } else if (state === 'array-next' && char !== ',') error = fail('"," or "]"');
      else {
        if (state === 'array-next') i++;
        stack[stack.length - 1] = 'array-next';
        error = scanValue();
      }
    } else if (state === 'object-first' || state === 'object-next') {
      if (char === '}') {
        i++;
        stack.pop();
        continue;
      }
      if (state === 'object-next') {
        if (char !== ',') {
          error = fail('"," or "}"');
          continue;
        }
        i++;
        skipSpace();
      }
      if (text[i] !== '"') {
        error = fail('a property name in double quotes');
        continue;
      }
      error = scanString();
      if (error) continue;
      skipSpace();
      if (text[i] !== ':') {
        error = fail('":"');
        continue;
      }
      i++;
      stack[stack.length - 1] = 'object-value';
    } else {
      stack[stack.length - 1] = 'object-next';
      error = scanValue();
    }
  }
  if (error) return error;
  skipSpace();
  return i < text.length ? fail('end of input after the JSON value') : undefined;
}
