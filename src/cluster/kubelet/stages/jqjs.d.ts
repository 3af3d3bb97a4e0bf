/** @michaelhomer/jqjs ships JavaScript without declarations; this is the part used here. */
declare module '@michaelhomer/jqjs' {
  interface Jq {
    (program: string): (input: unknown) => Iterable<unknown>;
    compile(program: string): (input: unknown) => Iterable<unknown>;
  }
  const jq: Jq;
  export default jq;
}
