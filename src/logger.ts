/**
 * The process's structured logger (decisions.md §15), backed by pino: one JSON object per line on
 * stdout, `{ time, level, msg, ...fields }` with `time` in ISO 8601 and `level` as a name, or a
 * coloured line per entry through pino-pretty when `log.format` is `pretty`.
 *
 * Callers pass fields, never raw error objects, so no SQL, file path or token reaches a log line
 * (a 500's stack is the one exception: passed as a string field, it stays server-side). As a last
 * guard, every line is written with its token-shaped strings masked (`maskTokens`: contract
 * §5.4), so a token inside an error message or a stack never reaches the log either.
 * The `Logger` interface is the whole surface: `logger.log(level, message, fields)`.
 */
import { pino, stdTimeFunctions, type DestinationStream, type Logger as Pino } from 'pino';
import pinoPretty from 'pino-pretty';
import sonicBoom from 'sonic-boom';
import { maskTokens } from './domain/tokens.js';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
/** A configured threshold: a level, or `silent` for nothing at all. */
export type LogThreshold = LogLevel | 'silent';

export interface Logger {
  /** Writes `message` with `fields` when `level` is at or above the threshold. */
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
}

export interface LoggerOptions {
  /** Default `info`. */
  level?: LogThreshold;
  /** `json` (default): one JSON object per line; `pretty`: for a terminal. */
  format?: 'json' | 'pretty';
  /**
   * Where lines go. Default: stdout, written asynchronously: lines logged while a write is under
   * way go out together in the next one (one write per many lines under load, none delayed when
   * idle), and what is left is written synchronously when the process exits.
   */
  destination?: DestinationStream;
}

/** Builds a logger from the `log.*` configuration keys. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const destination =
    options.destination ??
    (options.format === 'pretty'
      ? pinoPretty({ destination: 1, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
      : stdoutDestination());
  const p: Pino = pino(
    {
      level,
      base: undefined,
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      hooks: { streamWrite: maskTokens },
    },
    destination,
  );
  return {
    log(at, message, fields) {
      if (fields) p[at](fields, message);
      else p[at](message);
    },
  };
}

let stdout: DestinationStream | undefined;
/**
 * One asynchronous stdout stream per process, flushed synchronously when the process exits.
 *
 * A closed stdout (the reader of the pipe gone: a killed test runner, `| head`) must not keep the
 * process alive or kill it: a write that fails (EPIPE) turns the stream into a sink that drops
 * every later line. That is pino's own `pino.destination` rule, but pino 10 builds it on
 * sonic-boom 4, whose `flushSync` retries a failed write every 100 ms for ever: a server that
 * exited with a line still in flight never ended (issue #29). So the stream is sonic-boom 5's,
 * whose `flushSync` throws instead, made here.
 */
function stdoutDestination(): DestinationStream {
  if (!stdout) {
    const stream = new sonicBoom.SonicBoom({ fd: 1, sync: false });
    let broken = false;
    stream.on('error', () => {
      broken = true;
      stream.write = () => true;
    });
    process.on('exit', () => {
      if (broken) return;
      try {
        stream.flushSync();
      } catch {
        // stdout closed: nothing to save.
      }
    });
    stdout = stream;
  }
  return stdout;
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = { log() {} };
