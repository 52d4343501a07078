// Where a JSON text stops being JSON. V8's JSON.parse names no position for most errors ("Unexpected token
// 'x', ..."), and its message quotes the text around it, which may be a key: this walks the grammar of RFC 8259
// instead, and gives only the line and column.

/** The line and column (from 1) of the first character that is not JSON; undefined when the text is JSON. */
export function jsonErrorAt(text: string): { line: number; column: number } | undefined {
  const offset = firstError(text);
  if (offset === undefined) return undefined;
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: offset - lineStart + 1 };
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

function firstError(text: string): number | undefined {
  let at = 0;
  const fail = (): never => {
    throw new SyntaxAt(at);
  };
  const space = (): void => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++;
  };
  const matchAt = (pattern: RegExp): void => {
    pattern.lastIndex = at;
    if (!pattern.test(text)) fail();
    at = pattern.lastIndex;
  };
  const string = (): void => {
    if (text[at] !== '"') fail();
    at++;
    while (at < text.length && text[at] !== '"') {
      if (text[at] === '\\') matchAt(ESCAPE);
      else if (text.charCodeAt(at) < 0x20) fail();
      else at++;
    }
    if (at >= text.length) fail();
    at++;
  };
  const items = (close: string, item: () => void): void => {
    at++;
    space();
    if (text[at] === close) return void at++;
    for (;;) {
      item();
      space();
      if (text[at] === close) return void at++;
      if (text[at] !== ',') fail();
      at++;
      space();
    }
  };
  const value = (): void => {
    space();
    const c = text[at];
    if (c === '{') {
      items('}', () => {
        string();
        space();
        if (text[at] !== ':') fail();
        at++;
        value();
      });
    } else if (c === '[') {
      items(']', value);
    } else if (c === '"') {
      string();
    } else {
      const literal = ['true', 'false', 'null'].find((word) => text.startsWith(word, at));
      if (literal) at += literal.length;
      else matchAt(NUMBER);
    }
  };
  try {
    value();
    space();
    if (at < text.length) fail();
    return undefined;
  } catch (error) {
    if (error instanceof SyntaxAt) return error.offset;
    // A nesting too deep for the stack: where is not known.
    return undefined;
  }
}

class SyntaxAt {
  constructor(readonly offset: number) {}
}
