/**
 * Structured logging (pino): JSON lines by default, human-readable when stdout is a
 * terminal. Credentials never reach a log line: known secret-bearing keys are redacted
 * and Secret objects are reduced to their identity.
 */

import { pino } from 'pino';
import pretty from 'pino-pretty';

export type Logger = pino.Logger;

export type LogFormat = 'json' | 'pretty' | 'auto';

export interface LogOptions {
  /** trace, debug, info (default), warn, error, fatal, silent. */
  level?: string;
  /** `auto` (default): pretty on a TTY, JSON otherwise. */
  format?: LogFormat;
  /** Where JSON lines go; stdout by default. */
  destination?: pino.DestinationStream;
  name?: string;
}

const REDACT_PATHS = [
  'token',
  'password',
  'authorization',
  '*.token',
  '*.password',
  '*.authorization',
  '*.Authorization',
  '*.bearerToken',
  '*.clientKey',
  '*.client-key-data',
  '*.privateKey',
  'headers.authorization',
  '*.headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
];

/** Logs an object by identity only; a Secret's data must not be written anywhere. */
function objectSerializer(value: unknown): unknown {
  if (!value || typeof value !== 'object') return value;
  const o = value as { apiVersion?: string; kind?: string; metadata?: Record<string, unknown> };
  if (!o.kind || !o.metadata) return value;
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    namespace: o.metadata.namespace,
    name: o.metadata.name,
    resourceVersion: o.metadata.resourceVersion,
  };
}

export function createLogger(opts: LogOptions = {}): Logger {
  const format = opts.format ?? 'auto';
  const usePretty = format === 'pretty' || (format === 'auto' && !opts.destination && process.stdout.isTTY);
  const options: pino.LoggerOptions = {
    level: opts.level ?? 'info',
    name: opts.name,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      err: pino.stdSerializers.err,
      error: pino.stdSerializers.err,
      obj: objectSerializer,
      object: objectSerializer,
      old: objectSerializer,
    },
  };
  if (usePretty) {
    return pino(options, pretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l' }));
  }
  return pino(options, opts.destination ?? pino.destination({ dest: 1, sync: false }));
}

/** A logger that discards everything: the default for library use and tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
