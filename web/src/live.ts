/**
 * The page's one connection to the server: an EventSource on /api/events. The server
 * pushes a whole snapshot whenever the cluster changes; the browser never polls.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Snapshot } from '../../src/dashboard/view-model.ts';

export type Connection = 'connecting' | 'live' | 'reconnecting' | 'closed';

export interface Live {
  snapshot: Snapshot | undefined;
  connection: Connection;
  /** Server clock minus browser clock (ms), so ages are measured on the server's clock. */
  skewMs: number;
}

export function useLiveSnapshot(): Live {
  const [live, setLive] = useState<Live>({ snapshot: undefined, connection: 'connecting', skewMs: 0 });
  useEffect(() => {
    const source = new EventSource('api/events');
    source.addEventListener('snapshot', (e) => {
      const snapshot = JSON.parse((e as MessageEvent<string>).data) as Snapshot;
      const skewMs = Date.parse(snapshot.generatedAt) - Date.now();
      setLive({ snapshot, connection: 'live', skewMs });
    });
    source.onopen = () => setLive((l) => ({ ...l, connection: 'live' }));
    source.onerror = () =>
      setLive((l) => ({
        ...l,
        connection: source.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting',
      }));
    return () => source.close();
  }, []);
  return live;
}

/** The current time on the server's clock, advancing every `everyMs` (for ages and spend). */
export function useNow(skewMs: number, everyMs = 1000): number {
  const [now, setNow] = useState(() => Date.now() + skewMs);
  useEffect(() => {
    setNow(Date.now() + skewMs);
    const t = setInterval(() => setNow(Date.now() + skewMs), everyMs);
    return () => clearInterval(t);
  }, [skewMs, everyMs]);
  return now;
}
