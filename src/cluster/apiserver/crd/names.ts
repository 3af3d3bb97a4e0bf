/**
 * Name checks of apimachinery's util/validation with their exact messages (the messages are
 * the API contract clients see, so they are reproduced word for word, quirks included).
 */

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`;
const DNS1035_LABEL = '[a-z]([-a-z0-9]*[a-z0-9])?';

const dns1123SubdomainRe = new RegExp(`^${DNS1123_SUBDOMAIN}$`);
const dns1035LabelRe = new RegExp(`^${DNS1035_LABEL}$`);

function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((e, i) => {
    if (i > 0) out += ' or ';
    out += `'${e}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

function maxLenError(n: number): string {
  return `must be no more than ${n} characters`;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenError(253));
  if (!dns1123SubdomainRe.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN,
        'example.com',
      ),
    );
  }
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!dns1035LabelRe.test(value)) {
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL,
        'my-name',
        'abc-123',
      ),
    );
  }
  return errs;
}

/** NameIsDNSSubdomain: generateName prefixes may end in '-'. */
export function nameIsDNSSubdomain(name: string, prefix: boolean): string[] {
  // Same masking as apimachinery's maskTrailingDash, which also drops the character before the dash.
  const n = prefix && name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
  return isDNS1123Subdomain(n);
}

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!new RegExp(`^${DNS1123_LABEL}$`).test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        DNS1123_LABEL,
        'my-name',
        '123-abc',
      ),
    );
  }
  return errs;
}
