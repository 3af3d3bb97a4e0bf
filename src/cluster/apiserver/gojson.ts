/**
 * The text of Go's encoding/json syntax errors (`scanner.go`), for bodies JSON.parse refused:
 * kube-apiserver's messages quote them (`json parse error: invalid character 'a' looking for
 * beginning of value`), and clients match on them. Hand-written because no JavaScript JSON
 * parser words its errors as Go does; it runs only after JSON.parse failed, so it costs a
 * valid request nothing.
 */

/** Go's quoteChar: the offending byte as `'x'`, with `'\''` and `'"'` special-cased. */
function quoteChar(c: string): string {
  if (c === "'") return `'\\''`;
  if (c === '"') return `'"'`;
  const q = JSON.stringify(c);
  return `'${q.slice(1, -1)}'`;
}

class SyntaxFailure extends Error {}

/** Go's error for the first syntax error in `text`, or undefined if `text` is valid JSON. */
export function goJsonSyntaxError(text: string): string | undefined {
  let i = 0;
  const fail = (context: string): never => {
    if (i >= text.length) throw new SyntaxFailure('unexpected end of JSON input');
    throw new SyntaxFailure(`invalid character ${quoteChar(text[i]!)} ${context}`);
  };
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++;
  };
  const literal = (word: string) => {
    for (let k = 1; k < word.length; k++) {
      i++;
      if (text[i] !== word[k]) fail(`in literal ${word} (expecting ${quoteChar(word[k]!)})`);
    }
    i++;
  };
  const string = () => {
    i++; // opening quote
    for (;;) {
      if (i >= text.length) fail('');
      const c = text[i]!;
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        i++;
        const e = text[i];
        if (e === 'u') {
          for (let k = 0; k < 4; k++) {
            i++;
            if (!/[0-9a-fA-F]/.test(text[i] ?? '')) fail('in \\u hexadecimal character escape');
          }
        } else if (e === undefined || !'"\\/bfnrt'.includes(e)) fail('in string escape code');
        i++;
        continue;
      }
      if (c < ' ') fail('in string literal');
      i++;
    }
  };
  const digits = () => {
    while (i < text.length && text[i]! >= '0' && text[i]! <= '9') i++;
  };
  const number = () => {
    if (text[i] === '-') {
      i++;
      if (!(text[i]! >= '0' && text[i]! <= '9')) fail('in numeric literal');
    }
    if (text[i] === '0') i++;
    else digits();
    if (text[i] === '.') {
      i++;
      if (!(text[i]! >= '0' && text[i]! <= '9')) fail('after decimal point in numeric literal');
      digits();
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      if (!(text[i]! >= '0' && text[i]! <= '9')) fail('in exponent of numeric literal');
      digits();
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('looking for beginning of object key string');
        string();
        ws();
        if (text[i] !== ':') fail('after object key');
        i++;
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail('after object key:value pair');
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail('after array element');
      }
    }
    if (c === '"') string();
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) number();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else fail('looking for beginning of value');
  };
  try {
    value();
    ws();
    if (i < text.length) fail('after top-level value');
    return undefined;
  } catch (err) {
    if (err instanceof SyntaxFailure) return err.message;
    // Nesting deep enough to exhaust the stack: Go's scanner stops at its own limit.
    return 'exceeded max nesting depth';
  }
}
