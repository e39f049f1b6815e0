/**
 * A small structured logger: one JSON object per line on stderr. Callers pass fields, never
 * raw error objects, so no stack, SQL, file path or token reaches a log line.
 */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: LogLevel = 'info', write: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Logger {
  return {
    log(at, message, fields) {
      if (RANK[at] > RANK[level]) return;
      write(JSON.stringify({ time: new Date().toISOString(), level: at, message, ...fields }));
    },
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = { log() {} };
