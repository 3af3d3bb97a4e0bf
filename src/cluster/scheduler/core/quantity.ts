/**
 * Quantity → scheduler units. Parsing is the shared `src/kube/quantity.ts` (exact, BigInt);
 * the scheduler keeps plain numbers because every filter and score is number arithmetic.
 */

import { milliValue, tryParseQuantity, quantityValue as wholeValue } from '../../../kube/quantity.ts';

/** Quantity.Value(): the value rounded up to an integer (bytes, counts). NaN when unparseable. */
export function quantityValue(q: string | number | undefined | null): number {
  if (q === undefined || q === null) return 0;
  const p = tryParseQuantity(q);
  return p ? Number(wholeValue(p)) : Number.NaN;
}

/** Quantity.MilliValue(): thousandths rounded up (CPU in millicores). NaN when unparseable. */
export function quantityMilliValue(q: string | number | undefined | null): number {
  if (q === undefined || q === null) return 0;
  const p = tryParseQuantity(q);
  return p ? Number(milliValue(p)) : Number.NaN;
}
