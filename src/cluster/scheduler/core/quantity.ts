/**
 * resource.Quantity parsing, private to the scheduler core until `src/kube/quantity.ts` lands.
 *
 * Exact rational arithmetic with BigInt so `0.1` CPU is 100 millicores, not 100.00000000000001
 * rounded up to 101 as float arithmetic would. Parsing happens once per pod, never per node.
 */

const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

const NUMBER = /^([+-]?)(\d*)(?:\.(\d*))?(.*)$/;

/** A quantity as numerator / denominator, both BigInt; undefined when the text is not a quantity. */
function parseRational(input: string | number): { num: bigint; den: bigint } | undefined {
  const text = typeof input === 'number' ? String(input) : input.trim();
  const m = NUMBER.exec(text);
  if (!m) return undefined;
  const [, sign, whole = '', frac = '', suffix = ''] = m;
  if (whole === '' && frac === '') return undefined;
  let num = BigInt((whole || '0') + frac);
  let den = 10n ** BigInt(frac.length);
  if (sign === '-') num = -num;
  const bin = BINARY[suffix];
  if (bin !== undefined) return { num: num * bin, den };
  let exp10: number | undefined = DECIMAL[suffix];
  if (exp10 === undefined) {
    const e = /^[eE]([+-]?\d+)$/.exec(suffix);
    if (!e) return undefined;
    exp10 = Number(e[1]);
  }
  if (exp10 >= 0) num *= 10n ** BigInt(exp10);
  else den *= 10n ** BigInt(-exp10);
  return { num, den };
}

function ceilDiv(num: bigint, den: bigint): number {
  const q = num / den;
  const r = num % den;
  return Number(r > 0n ? q + 1n : q);
}

/** Quantity.Value(): the value rounded up to an integer (bytes, counts). NaN when unparseable. */
export function quantityValue(q: string | number | undefined | null): number {
  if (q === undefined || q === null) return 0;
  const r = parseRational(q);
  return r ? ceilDiv(r.num, r.den) : Number.NaN;
}

/** Quantity.MilliValue(): thousandths rounded up (CPU in millicores). NaN when unparseable. */
export function quantityMilliValue(q: string | number | undefined | null): number {
  if (q === undefined || q === null) return 0;
  const r = parseRational(q);
  return r ? ceilDiv(r.num * 1000n, r.den) : Number.NaN;
}
