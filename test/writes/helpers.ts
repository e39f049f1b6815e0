/**
 * Shared pieces of the write-operation tests: a seeded dataset (written straight into the store,
 * so these tests depend on nothing but the schema), string makers for length boundaries, and
 * local test doubles — an SMTP server (smtp-server) and a scriptable HTTP server.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { Store } from '../../src/db/connection.js';
import type { Database } from '../../src/db/schema.js';
import { startTestServer, type HarnessOptions, type TestServer } from '../helpers/harness.js';

/** A string of exactly `n` characters. */
export const chars = (n: number, fill = 'x') => fill.repeat(n).slice(0, n);

const T0 = '2026-03-01T09:00:00.000Z';
const stamp = { created_at: T0, updated_at: T0 };

type Rows = { [K in keyof Database]?: Record<string, unknown>[] };

const prospect = (id: string, siteId: string, projectId: string, domain: string, extra: Record<string, unknown> = {}) => ({
  id, site_id: siteId, project_id: projectId, status: 'proposed', url: `https://${domain}/article`, domain, title: `Article on ${domain}`, ...stamp, ...extra,
});
const contact = (id: string, prospectId: string, siteId: string, projectId: string, email: string, extra: Record<string, unknown> = {}) => ({
  id, prospect_id: prospectId, site_id: siteId, project_id: projectId, email, full_name: 'Ana Author', role: 'Editor', status: 'active', verification_status: 'unverified', ...stamp, ...extra,
});

/**
 * acct_a (pro until 2030) owns prj_a1 with site_a1 (an active sender, a draft, a thread) and
 * site_a2 (a thread, only a paused sender); acct_b (free) owns prj_b1/site_b1; acct_c (pro until
 * 2026-12-01, a month after the fake clock's start) owns prj_c1/site_c1. Each site has a draft,
 * a thread and contacts, so every write can be tried under every plan.
 */
export function seedRows(): Rows {
  const rows: Rows = {
    accounts: [
      { id: 'acct_a', email: 'a@example.com', name: 'A', plan: 'pro', plan_expires_at: '2030-01-01T00:00:00.000Z', ...stamp },
      { id: 'acct_b', email: 'b@example.com', name: 'B', plan: 'free', plan_expires_at: null, ...stamp },
      { id: 'acct_c', email: 'c@example.com', name: 'C', plan: 'pro', plan_expires_at: '2026-12-01T00:00:00.000Z', ...stamp },
    ],
    projects: [
      { id: 'prj_a1', account_id: 'acct_a', name: 'A1', ...stamp },
      { id: 'prj_b1', account_id: 'acct_b', name: 'B1', ...stamp },
      { id: 'prj_c1', account_id: 'acct_c', name: 'C1', ...stamp },
    ],
    sites: [
      { id: 'site_a1', project_id: 'prj_a1', name: 'Trail Gear', domain: 'trailgear.example', url: 'https://trailgear.example/', status: 'active', ...stamp },
      { id: 'site_a2', project_id: 'prj_a1', name: 'Second', domain: 'second.example', url: 'https://second.example/', status: 'active', ...stamp },
      { id: 'site_b1', project_id: 'prj_b1', name: 'B site', domain: 'b.example', url: 'https://b.example/', status: 'active', ...stamp },
      { id: 'site_c1', project_id: 'prj_c1', name: 'C site', domain: 'c.example', url: 'https://c.example/', status: 'active', ...stamp },
    ],
    prospects: [
      prospect('pr_a1', 'site_a1', 'prj_a1', 'hikingblog.example', {
        title: 'The 10 best hiking backpacks',
        description: 'A roundup of backpacks',
        content_excerpt: 'We tested ten packs over three months.',
        opportunity_type: 'resource_page',
        contact_paths: JSON.stringify([{ label: 'Editor', email: 'editor@hikingblog.example', name: 'Eve Editor', role: 'Editor' }]),
      }),
      prospect('pr_text', 'site_a1', 'prj_a1', 'textonly.example', { content_excerpt: 'Questions? Write to hello@textonly.example any time.' }),
      prospect('pr_mailto', 'site_a1', 'prj_a1', 'mailto.example', { contact_paths: JSON.stringify([{ url: 'mailto:Ana@Valid.test?subject=Hi' }]) }),
      prospect('pr_queued', 'site_a1', 'prj_a1', 'blog.queued.test', { contact_paths: JSON.stringify([{ url: 'mailto:later@blog.queued.test' }]) }),
      prospect('pr_queued_empty', 'site_a1', 'prj_a1', 'empty.queued.test'),
      prospect('pr_notfound', 'site_a1', 'prj_a1', 'x.notfound.test', { contact_paths: JSON.stringify([{ email: 'ignored@x.notfound.test' }]) }),
      prospect('pr_a2', 'site_a2', 'prj_a1', 'second-prospect.example'),
    ],
    contacts: [
      contact('con_a1', 'pr_a1', 'site_a1', 'prj_a1', 'ana@valid.test'),
      contact('con_mailto', 'pr_mailto', 'site_a1', 'prj_a1', 'ana@valid.test'),
      contact('con_invalid', 'pr_a1', 'site_a1', 'prj_a1', 'bob@invalid.test'),
      contact('con_risky', 'pr_a1', 'site_a1', 'prj_a1', 'carl@risky.test'),
      contact('con_unknown', 'pr_a1', 'site_a1', 'prj_a1', 'dora@unknown.test'),
      contact('con_disposable', 'pr_a1', 'site_a1', 'prj_a1', 'x@mailinator.com'),
      contact('con_a2', 'pr_a2', 'site_a2', 'prj_a1', 'eve@valid.test'),
    ],
    drafts: [
      { id: 'drf_a1', site_id: 'site_a1', project_id: 'prj_a1', prospect_id: 'pr_a1', contact_id: 'con_a1', message_id: 'dmsg_a1', status: 'draft', purpose: 'link_insertion', ...stamp },
      { id: 'drf_nomsg', site_id: 'site_a1', project_id: 'prj_a1', prospect_id: 'pr_a1', contact_id: 'con_a1', message_id: null, status: 'draft', purpose: null, ...stamp },
    ],
    draft_messages: [
      { id: 'dmsg_a1', draft_id: 'drf_a1', subject: 'Hello there', body: 'An original body of the draft message.', personalization: '{}', generation_provider: 'template', generation_model: 'template-v1', ...stamp },
    ],
    threads: [
      { id: 'thr_a1', site_id: 'site_a1', project_id: 'prj_a1', prospect_id: 'pr_a1', contact_id: 'con_a1', provider_thread_id: 'gmail-thread-123', status: 'open', outcome: 'none', classification: 'question', inbound_count: 1, outbound_count: 1, last_inbound_at: T0, last_outbound_at: T0, ...stamp },
      { id: 'thr_a2', site_id: 'site_a2', project_id: 'prj_a1', prospect_id: 'pr_a2', contact_id: 'con_a2', provider_thread_id: 'gmail-thread-456', status: 'open', outcome: 'none', classification: 'question', inbound_count: 1, outbound_count: 0, ...stamp },
    ],
    thread_messages: [
      { id: 'tm_a1_out', thread_id: 'thr_a1', direction: 'outbound', status: 'sent', from_email: 'me@trailgear.example', to_emails: '["ana@valid.test"]', subject: 'Guest post idea', body: 'Would you like a guest post?', sent_at: '2026-02-28T09:00:00.000Z', ...stamp },
      { id: 'tm_a1_in', thread_id: 'thr_a1', direction: 'inbound', status: 'sent', from_email: 'ana@valid.test', to_emails: '["me@trailgear.example"]', subject: 'Re: Guest post idea', body: 'Tell me more.', sent_at: T0, ...stamp },
    ],
    email_connections: [
      { id: 'conn_a1', site_id: 'site_a1', project_id: 'prj_a1', provider: 'smtp', status: 'connected', account_email: 'me@trailgear.example', ...stamp },
      { id: 'conn_a2', site_id: 'site_a2', project_id: 'prj_a1', provider: 'smtp', status: 'connected', account_email: 'me@second.example', ...stamp },
    ],
    email_senders: [
      { id: 'snd_a1', site_id: 'site_a1', project_id: 'prj_a1', connection_id: 'conn_a1', status: 'active', display_name: 'Mia from Trail Gear', email: 'me@trailgear.example', reply_to_email: 'replies@trailgear.example', ...stamp },
      { id: 'snd_a2', site_id: 'site_a2', project_id: 'prj_a1', connection_id: 'conn_a2', status: 'paused', email: 'me@second.example', ...stamp },
    ],
  };
  // The same minimal chain under site_b1 (free plan) and site_c1 (pro, expiring).
  for (const x of ['b', 'c'] as const) {
    const [site, project] = [`site_${x}1`, `prj_${x}1`];
    rows.prospects!.push(prospect(`pr_${x}1`, site, project, `${x}-prospect.example`, { contact_paths: JSON.stringify([{ email: `found@${x}-prospect.example` }]) }));
    rows.contacts!.push(contact(`con_${x}1`, `pr_${x}1`, site, project, `someone@valid.test`));
    rows.drafts!.push({ id: `drf_${x}1`, site_id: site, project_id: project, prospect_id: `pr_${x}1`, contact_id: `con_${x}1`, message_id: null, status: 'draft', purpose: null, ...stamp });
    rows.threads!.push({ id: `thr_${x}1`, site_id: site, project_id: project, prospect_id: `pr_${x}1`, contact_id: `con_${x}1`, provider_thread_id: `t-${x}`, status: 'open', outcome: 'none', classification: 'question', ...stamp });
    rows.email_connections!.push({ id: `conn_${x}1`, site_id: site, project_id: project, provider: 'smtp', status: 'connected', account_email: `me@${x}.example`, ...stamp });
    rows.email_senders!.push({ id: `snd_${x}1`, site_id: site, project_id: project, connection_id: `conn_${x}1`, status: 'active', email: `me@${x}.example`, ...stamp });
  }
  return rows;
}

/** Writes `seedRows()` into the store in one transaction. */
export function seed(store: Store, rows: Rows = seedRows()): void {
  store.transaction(() => {
    for (const [table, list] of Object.entries(rows)) {
      for (const row of list ?? []) {
        const columns = Object.keys(row);
        store.sqlite.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`).run(row);
      }
    }
  });
}

/** A test server over the seeded dataset, with the limiter off and the workers' timers slowed to a crawl (tests drive them). */
export async function startWriteServer(options: HarnessOptions = {}): Promise<TestServer> {
  const t = await startTestServer({
    ...options,
    config: { 'limits.requestsPerMinute': 0, 'outbox.pollIntervalMs': 3_600_000, ...options.config },
  });
  seed(t.store);
  return t;
}

/** A row of the store, for assertions. */
export const row = <T = Record<string, any>>(t: TestServer, sql: string, ...params: unknown[]) => t.store.sqlite.prepare(sql).get(...params) as T;

// ---- test doubles ------------------------------------------------------------------------------

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface TestSmtp {
  port: number;
  received: ReceivedMail[];
  /** Called on MAIL FROM; return an SMTP code (e.g. 451, 550) to refuse that attempt. */
  refuse: (attempt: number) => number | undefined;
  attempts: number;
  close(): Promise<void>;
}

/** An SMTP server on 127.0.0.1 (no TLS, no auth) that records what it accepts. */
export async function startSmtp(refuse: TestSmtp['refuse'] = () => undefined): Promise<TestSmtp> {
  const state = { received: [] as ReceivedMail[], refuse, attempts: 0 };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onMailFrom(_address, _session, callback) {
      state.attempts++;
      const code = state.refuse(state.attempts);
      if (code) return callback(Object.assign(new Error(code >= 500 ? 'mailbox unavailable' : 'try again later'), { responseCode: code }));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        state.received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return Object.assign(state, {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }) as TestSmtp;
}

export interface TestHttp {
  url: string;
  requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 answering with `handler` (which may wait before answering). */
export async function startHttp(handler: (req: IncomingMessage & { body: string }, res: ServerResponse) => void | Promise<void>): Promise<TestHttp> {
  const requests: TestHttp['requests'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      void Promise.resolve(handler(Object.assign(req, { body }), res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `res.end(JSON.stringify(body))` with a JSON content type. */
export const sendJson = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** A promise with its resolve function, to hold a test double's answer until the test says so. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
