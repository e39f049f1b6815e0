/**
 * Shared pieces of the write-operation tests: their dataset (an import document, like every
 * fixture), string makers for length boundaries, and
 * local test doubles — an SMTP server (smtp-server) and a scriptable HTTP server.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { Store } from '../../src/db/connection.js';
import { sqlGet } from '../helpers/sql.js';
import { importDocument, type ImportDocument } from '../../src/import/index.js';
import { account, project, site } from '../helpers/fixture.js';
import { startTestServer, type HarnessOptions, type TestServer } from '../helpers/harness.js';

/** A string of exactly `n` characters. */
export const chars = (n: number, fill = 'x') => fill.repeat(n).slice(0, n);

const T0 = '2026-03-01T09:00:00.000Z';
const stamp = { createdAt: T0, updatedAt: T0 };

type Records<C extends keyof ImportDocument> = NonNullable<ImportDocument[C]>;
type WritesCollections =
  | 'accounts'
  | 'projects'
  | 'sites'
  | 'prospects'
  | 'contacts'
  | 'drafts'
  | 'threads'
  | 'emailConnections'
  | 'emailSenders';

const prospect = (id: string, siteId: string, domain: string, extra: Records<'prospects'>[number] = {}) => ({
  id,
  siteId,
  status: 'proposed' as const,
  url: `https://${domain}/article`,
  domain,
  title: `Article on ${domain}`,
  ...stamp,
  ...extra,
});
const contact = (id: string, prospectId: string, email: string) => ({
  id,
  prospectId,
  email,
  fullName: 'Ana Author',
  role: 'Editor',
  status: 'active' as const,
  verificationStatus: 'unverified' as const,
  ...stamp,
});

/**
 * The write tests' dataset, as an import document (test/helpers/harness.ts loads it like every
 * fixture). acct_a (pro until 2030) owns prj_a1 with site_a1 (an active sender, a draft, a
 * thread) and site_a2 (a thread, only a paused sender); acct_b (free) owns prj_b1/site_b1;
 * acct_c (pro until 2026-12-01, a month after the fake clock's start) owns prj_c1/site_c1. Each
 * site has a draft, a thread and contacts, so every write can be tried under every plan.
 */
export function writesFixture(): ImportDocument {
  const doc: Required<Pick<ImportDocument, WritesCollections>> = {
    accounts: [
      account('acct_a', { email: 'a@example.com', name: 'A', planExpiresAt: '2030-01-01T00:00:00.000Z', ...stamp }),
      account('acct_b', { email: 'b@example.com', name: 'B', plan: 'free', planExpiresAt: null, ...stamp }),
      account('acct_c', { email: 'c@example.com', name: 'C', planExpiresAt: '2026-12-01T00:00:00.000Z', ...stamp }),
    ],
    projects: [
      project('prj_a1', 'acct_a', { name: 'A1', ...stamp }),
      project('prj_b1', 'acct_b', { name: 'B1', ...stamp }),
      project('prj_c1', 'acct_c', { name: 'C1', ...stamp }),
    ],
    sites: [
      site('site_a1', 'prj_a1', {
        name: 'Trail Gear',
        domain: 'trailgear.example',
        url: 'https://trailgear.example/',
        ...stamp,
      }),
      site('site_a2', 'prj_a1', { name: 'Second', domain: 'second.example', url: 'https://second.example/', ...stamp }),
      site('site_b1', 'prj_b1', { name: 'B site', domain: 'b.example', url: 'https://b.example/', ...stamp }),
      site('site_c1', 'prj_c1', { name: 'C site', domain: 'c.example', url: 'https://c.example/', ...stamp }),
    ],
    prospects: [
      prospect('pr_a1', 'site_a1', 'hikingblog.example', {
        title: 'The 10 best hiking backpacks',
        description: 'A roundup of backpacks',
        contentExcerpt: 'We tested ten packs over three months.',
        opportunityType: 'resource_page',
        contactPaths: [{ label: 'Editor', email: 'editor@hikingblog.example', name: 'Eve Editor', role: 'Editor' }],
      }),
      prospect('pr_text', 'site_a1', 'textonly.example', {
        contentExcerpt: 'Questions? Write to hello@textonly.example any time.',
      }),
      prospect('pr_mailto', 'site_a1', 'mailto.example', {
        contactPaths: [{ url: 'mailto:Ana@Valid.test?subject=Hi' }],
      }),
      prospect('pr_queued', 'site_a1', 'blog.queued.test', {
        contactPaths: [{ url: 'mailto:later@blog.queued.test' }],
      }),
      prospect('pr_queued_empty', 'site_a1', 'empty.queued.test'),
      prospect('pr_notfound', 'site_a1', 'x.notfound.test', { contactPaths: [{ email: 'ignored@x.notfound.test' }] }),
      prospect('pr_a2', 'site_a2', 'second-prospect.example'),
    ],
    contacts: [
      contact('con_a1', 'pr_a1', 'ana@valid.test'),
      contact('con_mailto', 'pr_mailto', 'ana@valid.test'),
      contact('con_invalid', 'pr_a1', 'bob@invalid.test'),
      contact('con_risky', 'pr_a1', 'carl@risky.test'),
      contact('con_unknown', 'pr_a1', 'dora@unknown.test'),
      contact('con_disposable', 'pr_a1', 'x@mailinator.com'),
      contact('con_a2', 'pr_a2', 'eve@valid.test'),
    ],
    drafts: [
      {
        id: 'drf_a1',
        siteId: 'site_a1',
        prospectId: 'pr_a1',
        contactId: 'con_a1',
        status: 'draft',
        purpose: 'link_insertion',
        ...stamp,
        message: {
          id: 'dmsg_a1',
          subject: 'Hello there',
          body: 'An original body of the draft message.',
          personalization: {},
          generationProvider: 'template',
          generationModel: 'template-v1',
          ...stamp,
        },
      },
      {
        id: 'drf_nomsg',
        siteId: 'site_a1',
        prospectId: 'pr_a1',
        contactId: 'con_a1',
        status: 'draft',
        purpose: null,
        message: null,
        ...stamp,
      },
    ],
    threads: [
      {
        id: 'thr_a1',
        siteId: 'site_a1',
        prospectId: 'pr_a1',
        contactId: 'con_a1',
        threadId: 'gmail-thread-123',
        status: 'open',
        outcome: 'none',
        classification: 'question',
        inboundCount: 1,
        outboundCount: 1,
        lastInboundAt: T0,
        lastOutboundAt: T0,
        ...stamp,
        messages: [
          {
            id: 'tm_a1_out',
            direction: 'outbound',
            status: 'sent',
            fromEmail: 'me@trailgear.example',
            toEmails: ['ana@valid.test'],
            subject: 'Guest post idea',
            body: 'Would you like a guest post?',
            sentAt: '2026-02-28T09:00:00.000Z',
            createdAt: T0,
          },
          {
            id: 'tm_a1_in',
            direction: 'inbound',
            status: 'sent',
            fromEmail: 'ana@valid.test',
            toEmails: ['me@trailgear.example'],
            subject: 'Re: Guest post idea',
            body: 'Tell me more.',
            sentAt: T0,
            createdAt: T0,
          },
        ],
      },
      {
        id: 'thr_a2',
        siteId: 'site_a2',
        prospectId: 'pr_a2',
        contactId: 'con_a2',
        threadId: 'gmail-thread-456',
        status: 'open',
        outcome: 'none',
        classification: 'question',
        inboundCount: 1,
        outboundCount: 0,
        ...stamp,
      },
    ],
    emailConnections: [
      {
        id: 'conn_a1',
        siteId: 'site_a1',
        provider: 'smtp',
        status: 'connected',
        accountEmail: 'me@trailgear.example',
        ...stamp,
      },
      {
        id: 'conn_a2',
        siteId: 'site_a2',
        provider: 'smtp',
        status: 'connected',
        accountEmail: 'me@second.example',
        ...stamp,
      },
    ],
    emailSenders: [
      {
        id: 'snd_a1',
        siteId: 'site_a1',
        connectionId: 'conn_a1',
        status: 'active',
        displayName: 'Mia from Trail Gear',
        email: 'me@trailgear.example',
        replyToEmail: 'replies@trailgear.example',
        ...stamp,
      },
      {
        id: 'snd_a2',
        siteId: 'site_a2',
        connectionId: 'conn_a2',
        status: 'paused',
        email: 'me@second.example',
        ...stamp,
      },
    ],
  };
  // The same minimal chain under site_b1 (free plan) and site_c1 (pro, expiring).
  for (const x of ['b', 'c'] as const) {
    const siteId = `site_${x}1`;
    doc.prospects.push(
      prospect(`pr_${x}1`, siteId, `${x}-prospect.example`, {
        contactPaths: [{ email: `found@${x}-prospect.example` }],
      }),
    );
    doc.contacts.push(contact(`con_${x}1`, `pr_${x}1`, 'someone@valid.test'));
    doc.drafts.push({
      id: `drf_${x}1`,
      siteId,
      prospectId: `pr_${x}1`,
      contactId: `con_${x}1`,
      status: 'draft',
      purpose: null,
      message: null,
      ...stamp,
    });
    doc.threads.push({
      id: `thr_${x}1`,
      siteId,
      prospectId: `pr_${x}1`,
      contactId: `con_${x}1`,
      threadId: `t-${x}`,
      status: 'open',
      outcome: 'none',
      classification: 'question',
      inboundCount: 0,
      outboundCount: 0,
      ...stamp,
    });
    doc.emailConnections.push({
      id: `conn_${x}1`,
      siteId,
      provider: 'smtp',
      status: 'connected',
      accountEmail: `me@${x}.example`,
      ...stamp,
    });
    doc.emailSenders.push({
      id: `snd_${x}1`,
      siteId,
      connectionId: `conn_${x}1`,
      status: 'active',
      email: `me@${x}.example`,
      ...stamp,
    });
  }
  return doc;
}

/** Imports `writesFixture()` into the store (one transaction), as the harness does with `fixture`. */
export async function seed(store: Store): Promise<void> {
  await importDocument(store, writesFixture(), { nowIso: T0 });
}

/** A test server over the seeded dataset, with the limiter off and the workers' timers slowed to a crawl (tests drive them). */
export async function startWriteServer(options: HarnessOptions = {}): Promise<TestServer> {
  return startTestServer({
    fixture: writesFixture(),
    ...options,
    config: { 'limits.requestsPerMinute': 0, 'outbox.pollIntervalMs': 3_600_000, ...options.config },
  });
}

/** A row of the store, for assertions (`?` placeholders on both stores: test/helpers/sql.ts). */
export const row = async <T = Record<string, any>>(t: TestServer, sql: string, ...params: unknown[]) =>
  (await sqlGet<T>(t.store, sql, ...params)) as T;

// ---- test doubles ------------------------------------------------------------------------------

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

/** A message read by the server and not yet answered (see `TestSmtp.hold`). */
export interface HeldMail extends ReceivedMail {
  /** Its client closed the connection while it was held: it was never accepted. */
  abandoned: boolean;
}

export interface TestSmtp {
  port: number;
  /** The messages accepted (answered 250), in order. */
  received: ReceivedMail[];
  /** Called on MAIL FROM; return an SMTP code (e.g. 451, 550) to refuse that attempt. */
  refuse: (attempt: number) => number | undefined;
  attempts: number;
  /**
   * While set, each message is read whole but its DATA is not answered until the promise
   * settles (a relay that is slow to accept: the sender is mid-send meanwhile). Then it is
   * accepted and added to `received`, unless its client went away first (`abandoned`).
   */
  hold: Promise<void> | undefined;
  /** The messages held now (see `hold`). */
  held: HeldMail[];
  close(): Promise<void>;
}

/** An SMTP server on 127.0.0.1 (no TLS, no auth) that records what it accepts. */
export async function startSmtp(refuse: TestSmtp['refuse'] = () => undefined): Promise<TestSmtp> {
  const state = {
    received: [] as ReceivedMail[],
    refuse,
    attempts: 0,
    hold: undefined as Promise<void> | undefined,
    held: [] as HeldMail[],
  };
  /** Held messages by session id, to mark them abandoned when their connection closes. */
  const holding = new Map<string, HeldMail>();
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onMailFrom(_address, _session, callback) {
      state.attempts++;
      const code = state.refuse(state.attempts);
      if (code)
        return callback(
          Object.assign(new Error(code >= 500 ? 'mailbox unavailable' : 'try again later'), { responseCode: code }),
        );
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        };
        const hold = state.hold;
        if (!hold) {
          state.received.push(mail);
          return callback();
        }
        const held: HeldMail = { ...mail, abandoned: false };
        state.held.push(held);
        holding.set(session.id, held);
        void hold.then(() => {
          holding.delete(session.id);
          state.held.splice(state.held.indexOf(held), 1);
          if (held.abandoned) return callback(new Error('the client went away'));
          state.received.push(mail);
          callback();
        });
      });
    },
    onClose(session) {
      const held = holding.get(session.id);
      if (held) held.abandoned = true;
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
export async function startHttp(
  handler: (req: IncomingMessage & { body: string }, res: ServerResponse) => void | Promise<void>,
): Promise<TestHttp> {
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
