/**
 * Property-name escaping of Kubernetes CEL: schema properties are exposed to rules as CEL
 * identifiers, so `x-y` is reached as `self.x__dash__y` and `namespace` as `self.__namespace__`.
 */

/**
 * CEL's reserved words (cel-spec's grammar): a property named so is escaped, and a policy
 * variable may not be named so.
 */
export const CEL_RESERVED: ReadonlySet<string> = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** The CEL identifier for a property name, or undefined when the name cannot be exposed. */
export function escapeProperty(name: string): string | undefined {
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  if (!/^[a-zA-Z_./-][a-zA-Z0-9_./-]*$/.test(name)) return undefined;
  let out = '';
  for (let i = 0; i < name.length; i++) {
    if (name.startsWith('__', i)) {
      out += '__underscores__';
      i++;
      continue;
    }
    const c = name[i]!;
    if (c === '.') out += '__dot__';
    else if (c === '-') out += '__dash__';
    else if (c === '/') out += '__slash__';
    else out += c;
  }
  return out;
}
