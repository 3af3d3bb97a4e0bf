/** Parses bind addresses as Go's net.Listen takes them: `:8081`, `127.0.0.1:0`, `[::1]:9443`, `8081`. */
export function parseAddress(address: string, defaultHost = '0.0.0.0'): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(address);
  if (m) return { host: m[1] ?? (m[2] || defaultHost), port: Number(m[3]) };
  if (/^\d+$/.test(address)) return { host: defaultHost, port: Number(address) };
  throw new Error(`invalid bind address ${JSON.stringify(address)} (want host:port or :port)`);
}
