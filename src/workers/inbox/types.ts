/**
 * What an inbox pass is given and what it gives back (decisions.md §17): shared by the pass
 * (`./pass.ts`), its recorder (`./recorder.ts`), the fixture's one message (`./receive.ts`) and
 * `outreach-api inbox sync`.
 */
import type { Clock } from '../../domain/clock.js';
import type { Config } from '../../config.js';
import type { Store } from '../../db/connection.js';
import type { Logger } from '../../logger.js';
import type { Metrics } from '../../metrics.js';
import type { ReplyClassifier } from '../../providers/index.js';
import type { MailboxSession } from '../../providers/imap.js';
import type { InboxResult } from './record.js';

/** How long a lease lasts, ms: renewed at every batch, and longer than two waits on the server. */
export const leaseMs = (config: Config): number => Math.max(60_000, 3 * config.inbox.timeoutMs);

export interface InboxDeps {
  store: Store;
  clock: Clock;
  config: Config;
  logger: Logger;
  /** Counts each message by result when metrics are on. */
  metrics?: Metrics;
  /** The model for human replies (`providers.generator: openai`). */
  classifier?: ReplyClassifier;
  /** Where the passwords are read (the variables `passwordEnv` names); default `process.env`. */
  env?: Record<string, string | undefined>;
}

/** What a pass did for one connection. `fetched` is the sum of the six results. */
export interface ConnectionSummary {
  connectionId: string;
  /** `ok`: the mailbox was read; `error`: it could not be (see `error`); `busy`: another instance holds its lease. */
  status: 'ok' | 'error' | 'busy';
  error: string | null;
  fetched: number;
  matched: number;
  unmatched: number;
  duplicates: number;
  bounces: number;
  skipped: number;
  errors: number;
  /** Wall time, ms. */
  ms: number;
}

export interface InboxPassOptions {
  /** Only these connections (CLI `--connection`); default every one of `inbox.connections`. */
  connectionIds?: string[];
  /** Stops the pass after the batch in hand (it is recorded). */
  signal?: AbortSignal;
  /** The lease holder; default a new random one. */
  holder?: string;
  /** Sessions to reuse and keep (by connection id); default: each is opened and closed by the pass. */
  sessions?: Map<string, MailboxSession>;
  /** Called once the messages of a connection are listed, with how many will be read. */
  onStart?: (connectionId: string, total: number) => void;
  /** Called after each message's result is recorded. */
  onMessage?: (connectionId: string, result: InboxResult) => void;
}
