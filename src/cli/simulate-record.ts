export async function recordTrace(_file: string, _flags: object): Promise<void> {
  throw new Error('not yet');
}
