/**
 * Orders two strings by UTF-16 code unit, as `<` does: for the ASCII keys and names it is
 * given, the order of Go's sort.Strings. Unlike localeCompare it does not depend on the
 * process's locale, so what it sorts comes out the same on every machine.
 */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
