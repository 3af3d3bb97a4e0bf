/**
 * Resource quantities (apimachinery's resource.Quantity): `100m`, `1Gi`, `2`, `1e3`, `500Ki`.
 *
 * Hand-written because the npm options either lose precision (client-node's
 * quantityToScalar returns floats for fractional values) or cannot format back to the
 * canonical form the API server stores. Values are kept exactly as bigint nano-units,
 * which is Kubernetes' own finest precision: anything finer is rounded up to 1n.
 */

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface Quantity {
  /** The exact value in units of 10^-9. */
  readonly nanos: bigint;
  /** How the value is rendered back (kept from the parsed suffix, like resource.Quantity). */
  readonly format: QuantityFormat;
}

/** The two error texts of resource.ParseQuantity (ErrFormatWrong, ErrSuffix). */
export const QUANTITY_FORMAT_ERROR =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

export class QuantityParseError extends Error {
  readonly input: string;
  constructor(input: string, message: string) {
    super(message);
    this.name = 'QuantityParseError';
    this.input = input;
  }
}

const NANO = 1_000_000_000n;
const MILLI_PER_NANO = 1_000_000n;

const DECIMAL_SUFFIXES: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIXES: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([s, e]) => [e, s]));
const BINARY_BY_POWER = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** Integer division rounding away from zero, as inf.Dec's RoundUp does. */
function divRoundUp(num: bigint, den: bigint): bigint {
  const q = num / den;
  if (q * den === num) return q;
  return num < 0n ? q - 1n : q + 1n;
}

/** parseQuantityString's split of `[sign]digits[.digits][suffix]`, with its two error cases. */
function splitQuantity(str: string): { negative: boolean; whole: string; frac: string; suffix: string } {
  let pos = 0;
  let negative = false;
  if (str[0] === '-' || str[0] === '+') {
    negative = str[0] === '-';
    pos++;
  }
  const digitsFrom = (from: number) => {
    let i = from;
    while (i < str.length && str[i]! >= '0' && str[i]! <= '9') i++;
    return i;
  };
  let end = digitsFrom(pos);
  const whole = str.slice(pos, end);
  let frac = '';
  if (str[end] === '.') {
    const fracEnd = digitsFrom(end + 1);
    frac = str.slice(end + 1, fracEnd);
    end = fracEnd;
  }
  let i = end;
  while (i < str.length && 'eEinumkKMGTP'.includes(str[i]!)) i++;
  if (str[i] === '-' || str[i] === '+') i++;
  i = digitsFrom(i);
  if (i < str.length) throw new QuantityParseError(str, QUANTITY_FORMAT_ERROR);
  return { negative, whole, frac, suffix: str.slice(end) };
}

/** Parses a quantity string (or a JSON number). Throws QuantityParseError on malformed input. */
export function parseQuantity(input: string | number): Quantity {
  const str = typeof input === 'number' ? numberToString(input) : input;
  if (str.length === 0) throw new QuantityParseError(str, QUANTITY_FORMAT_ERROR);
  const { negative, whole, frac, suffix } = splitQuantity(str);

  let format: QuantityFormat;
  let exp10 = 0;
  let binaryPower = 0;
  if (suffix in DECIMAL_SUFFIXES) {
    format = 'DecimalSI';
    exp10 = DECIMAL_SUFFIXES[suffix]!;
  } else if (suffix in BINARY_SUFFIXES) {
    format = 'BinarySI';
    binaryPower = BINARY_SUFFIXES[suffix]!;
  } else if (/^[eE][-+]?[0-9]+$/.test(suffix)) {
    format = 'DecimalExponent';
    exp10 = Number.parseInt(suffix.slice(1), 10);
  } else {
    throw new QuantityParseError(str, QUANTITY_SUFFIX_ERROR);
  }

  let mantissa = BigInt(whole + frac || '0');
  if (negative) mantissa = -mantissa;
  // value = mantissa * 10^(exp10 - frac.length) * 1024^binaryPower, expressed in nanos.
  let numerator = mantissa * 1024n ** BigInt(binaryPower);
  const shift = exp10 - frac.length + 9;
  let denominator = 1n;
  if (shift >= 0) numerator *= pow10(shift);
  else denominator = pow10(-shift);
  return { nanos: divRoundUp(numerator, denominator), format };
}

function numberToString(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  // JSON numbers like 0.5 or 1e-7 arrive here; String() may use exponent notation, which parses.
  return String(n).replace('e+', 'e');
}

/** Parses, returning undefined instead of throwing. */
export function tryParseQuantity(input: unknown): Quantity | undefined {
  if (typeof input !== 'string' && typeof input !== 'number') return undefined;
  try {
    return parseQuantity(input);
  } catch {
    return undefined;
  }
}

/** Accepts either form so callers can pass raw manifest values. */
export function toQuantity(q: Quantity | string | number): Quantity {
  return typeof q === 'object' ? q : parseQuantity(q);
}

export function quantityFromNanos(nanos: bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
  return { nanos, format };
}

export function quantityFromMilli(milli: bigint | number, format: QuantityFormat = 'DecimalSI'): Quantity {
  return { nanos: BigInt(milli) * MILLI_PER_NANO, format };
}

export function quantityFromValue(value: bigint | number, format: QuantityFormat = 'DecimalSI'): Quantity {
  return { nanos: BigInt(value) * NANO, format };
}

/** The value in milli-units, rounded up like Quantity.MilliValue(). */
export function milliValue(q: Quantity | string | number): bigint {
  return divRoundUp(toQuantity(q).nanos, MILLI_PER_NANO);
}

/** The value in whole units, rounded up like Quantity.Value(). */
export function quantityValue(q: Quantity | string | number): bigint {
  return divRoundUp(toQuantity(q).nanos, NANO);
}

/** Milli-units straight from a string: the common case for cpu. Throws on malformed input. */
export function parseQuantityMilli(input: string | number): bigint {
  return milliValue(parseQuantity(input));
}

export function compareQuantities(a: Quantity | string | number, b: Quantity | string | number): -1 | 0 | 1 {
  const x = toQuantity(a).nanos;
  const y = toQuantity(b).nanos;
  return x < y ? -1 : x > y ? 1 : 0;
}

export function quantitiesEqual(a: Quantity | string | number, b: Quantity | string | number): boolean {
  return compareQuantities(a, b) === 0;
}

/** Sum keeping the first operand's format, as Quantity.Add does. */
export function addQuantities(a: Quantity | string | number, b: Quantity | string | number): Quantity {
  const x = toQuantity(a);
  return { nanos: x.nanos + toQuantity(b).nanos, format: x.format };
}

export function subtractQuantities(a: Quantity | string | number, b: Quantity | string | number): Quantity {
  const x = toQuantity(a);
  return { nanos: x.nanos - toQuantity(b).nanos, format: x.format };
}

export function isZeroQuantity(q: Quantity | string | number): boolean {
  return toQuantity(q).nanos === 0n;
}

/**
 * The canonical string the API server stores and returns (Quantity.String()):
 * `1500m`, `2`, `1k`, `1536Mi`, `1e3`. Binary quantities that are not whole numbers of
 * bytes, or whose magnitude is below 1024, render as DecimalSI.
 */
export function formatQuantity(q: Quantity | string | number): string {
  const { nanos, format } = toQuantity(q);
  if (nanos === 0n) return '0';
  const negative = nanos < 0n;
  const abs = negative ? -nanos : nanos;
  const sign = negative ? '-' : '';
  if (format === 'BinarySI' && abs >= 1024n * NANO && abs % NANO === 0n) {
    let units = abs / NANO;
    let power = 0;
    while (power < 6 && units % 1024n === 0n) {
      units /= 1024n;
      power++;
    }
    return `${sign}${units}${BINARY_BY_POWER[power]}`;
  }
  // Largest exponent (a multiple of 3) that keeps the mantissa whole.
  let mantissa = abs;
  let exponent = -9;
  while (mantissa % 1000n === 0n) {
    mantissa /= 1000n;
    exponent += 3;
  }
  if (format === 'DecimalExponent') {
    return exponent === 0 ? `${sign}${mantissa}` : `${sign}${mantissa}e${exponent}`;
  }
  if (exponent > 18) {
    mantissa *= pow10(exponent - 18);
    exponent = 18;
  }
  return `${sign}${mantissa}${DECIMAL_BY_EXPONENT.get(exponent)}`;
}

/** Parses and re-renders; throws on malformed input. */
export function canonicalizeQuantity(input: string | number): string {
  return formatQuantity(parseQuantity(input));
}

/** A map of resource name to quantity, as in requests/limits/capacity. */
export type ResourceList = Record<string, Quantity>;

/** Parses a raw ResourceList (values as strings or numbers); malformed entries are skipped. */
export function parseResourceList(raw: unknown): ResourceList {
  const out: ResourceList = {};
  if (!raw || typeof raw !== 'object') return out;
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const q = tryParseQuantity(value);
    if (q) out[name] = q;
  }
  return out;
}

/** Adds `b` into `a` (in place), creating entries that `a` lacks. */
export function addResourceList(a: ResourceList, b: ResourceList): ResourceList {
  for (const [name, q] of Object.entries(b)) {
    const cur = a[name];
    a[name] = cur ? addQuantities(cur, q) : q;
  }
  return a;
}

/** Raises each entry of `a` (in place) to at least the matching entry of `b`. */
export function maxResourceList(a: ResourceList, b: ResourceList): ResourceList {
  for (const [name, q] of Object.entries(b)) {
    const cur = a[name];
    if (!cur || compareQuantities(q, cur) > 0) a[name] = q;
  }
  return a;
}

/** Renders every entry canonically, e.g. for writing a ResourceList back into an object. */
export function formatResourceList(list: ResourceList): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, q] of Object.entries(list)) out[name] = formatQuantity(q);
  return out;
}
