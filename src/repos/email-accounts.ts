/**
 * Email sending accounts of a site: mail connections and the senders that use them (contract §2
 * "Email accounts"; decisions.md §11 for the value lists). Not paginated (contract §4).
 */
import type { Kysely, Selectable } from 'kysely';
import { precompiledQuery } from '../db/compiled.js';
import type { Database, EmailConnectionsTable, EmailSendersTable } from '../db/schema.js';
import type { z } from '@hono/zod-openapi';
import type { EmailAccounts, EmailConnection, EmailSender } from '../schemas/resources.js';

export type EmailConnectionRow = Selectable<EmailConnectionsTable>;
export type EmailSenderRow = Selectable<EmailSendersTable>;

export type EmailConnectionRecord = z.output<typeof EmailConnection>;

export type EmailSenderRecord = z.output<typeof EmailSender>;

export type EmailAccountsRecord = z.output<typeof EmailAccounts>;

/** Row → API (contract §2 "Connection"): `has_error` 0/1 → boolean; `site_id`, `project_id` stay internal. */
export const toEmailConnection = (row: EmailConnectionRow): EmailConnectionRecord => ({
  id: row.id,
  provider: row.provider,
  status: row.status,
  accountEmail: row.account_email,
  providerRegion: row.provider_region,
  hasError: row.has_error === 1,
  connectedAt: row.connected_at,
  lastTestedAt: row.last_tested_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Row → API (contract §2 "Sender"); `site_id`, `project_id` stay internal. */
export const toEmailSender = (row: EmailSenderRow): EmailSenderRecord => ({
  id: row.id,
  connectionId: row.connection_id,
  source: row.source,
  status: row.status,
  verificationStatus: row.verification_status,
  displayName: row.display_name,
  email: row.email,
  replyToEmail: row.reply_to_email,
  dailyLimit: row.daily_limit,
  healthStatus: row.health_status,
  warmupStatus: row.warmup_status,
  healthScore: row.health_score,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/**
 * Every connection and every sender of site `siteId` (already checked to be in the caller's
 * project), each newest `createdAt` first (ties: `id` descending; indexes
 * `email_connections_site_order`, `email_senders_site_order`).
 */
export async function listEmailAccounts(db: Kysely<Database>, siteId: string): Promise<EmailAccountsRecord> {
  const [connections, senders] = await Promise.all([
    db
      .selectFrom('email_connections')
      .selectAll()
      .where('site_id', '=', siteId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute(),
    db
      .selectFrom('email_senders')
      .selectAll()
      .where('site_id', '=', siteId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute(),
  ]);
  return { connections: connections.map(toEmailConnection), senders: senders.map(toEmailSender) };
}

const firstActiveSender = precompiledQuery((db, param) =>
  db
    .selectFrom('email_senders')
    .select(['id', 'email'])
    .where('site_id', '=', param('siteId'))
    .where('status', '=', 'active')
    .orderBy('created_at')
    .orderBy('id')
    .limit(1),
);

/**
 * The sender a reply of site `siteId` goes out from: its first `active` sender (oldest, then
 * by id), or undefined. Compiled once.
 */
export function activeSender(db: Kysely<Database>, siteId: string): Promise<{ id: string; email: string } | undefined> {
  return firstActiveSender.first(db, { siteId });
}

/** An email connection as the inbox sync needs it (decisions.md §17). */
export interface InboxConnectionRow {
  id: string;
  siteId: string;
  accountEmail: string;
}

/** The email connections among `ids` that exist, by id. */
export async function inboxConnections(db: Kysely<Database>, ids: readonly string[]) {
  if (ids.length === 0) return new Map<string, InboxConnectionRow>();
  const rows = await db
    .selectFrom('email_connections')
    .select(['id', 'site_id as siteId', 'account_email as accountEmail'])
    .where('id', 'in', [...ids])
    .execute();
  return new Map<string, InboxConnectionRow>(rows.map((row) => [row.id, row]));
}

/**
 * Records how reading connection `connectionId`'s mailbox went at `now` (ISO 8601; decisions.md
 * §17 "Connections"): a good pass makes it `connected` without error, tested now (and connected
 * now if it never was); a failed login or connection makes it `error` with `hasError`.
 */
export async function recordConnectionHealth(
  db: Kysely<Database>,
  connectionId: string,
  healthy: boolean,
  now: string,
): Promise<void> {
  await db
    .updateTable('email_connections')
    .set((eb) =>
      healthy
        ? {
            status: 'connected',
            has_error: 0,
            last_tested_at: now,
            connected_at: eb.fn.coalesce('connected_at', eb.val(now)),
            updated_at: now,
          }
        : { status: 'error', has_error: 1, updated_at: now },
    )
    .where('id', '=', connectionId)
    .execute();
}
