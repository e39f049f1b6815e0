/**
 * The tests' data, always an import document: the small fixture (test/fixtures/small.json) read
 * as the document it is, for expected values, and the builders of hand-written documents
 * (records with their defaults, the route tests' accounts, projects and sites).
 */
import { readFileSync } from 'node:fs';
import type { ImportDocument } from '../../src/import/index.js';

export const SMALL: { [collection: string]: any[] } & { backlinks: any[]; leads: any[]; prospects: any[] } = JSON.parse(
  readFileSync(new URL('../fixtures/small.json', import.meta.url), 'utf8'),
);

/**
 * What the API shows for a fixture record: each field of `shown` as the document has it; a field
 * the document leaves out is null (an array empty, a boolean false); date-times in UTC.
 */
export function fromFixture(record: Record<string, unknown>, shown: Record<string, unknown>): Record<string, unknown> {
  const value = (key: string) => {
    const v = record[key];
    return key.endsWith('At') && typeof v === 'string' ? new Date(v).toISOString() : v;
  };
  return Object.fromEntries(
    Object.keys(shown).map((key) => [
      key,
      key in record ? value(key) : Array.isArray(shown[key]) ? [] : typeof shown[key] === 'boolean' ? false : null,
    ]),
  );
}

type Rec<C extends keyof ImportDocument> = NonNullable<ImportDocument[C]>[number];

/** 2026-03-`day` at `hour`:00 UTC, the date-times of the hand-written fixtures. */
export const T = (day: number, hour = 10): string =>
  `2026-03-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00.000Z`;

/** An account record of an import document: pro, without an end date, unless `extra` says otherwise. */
export const account = (id: string, extra: Rec<'accounts'> = {}): Rec<'accounts'> => ({
  id,
  email: `${id}@example.test`,
  name: id,
  plan: 'pro',
  ...extra,
});

/** A project record, created and updated at T(1). */
export const project = (id: string, accountId: string, extra: Rec<'projects'> = {}): Rec<'projects'> => ({
  id,
  accountId,
  name: id,
  createdAt: T(1),
  updatedAt: T(1),
  ...extra,
});

/** An active site record on `https://{id}.test`, created and updated at T(1). */
export const site = (id: string, projectId: string, extra: Rec<'sites'> = {}): Rec<'sites'> => ({
  id,
  projectId,
  name: id,
  domain: `${id}.test`,
  url: `https://${id}.test`,
  status: 'active',
  createdAt: T(1),
  updatedAt: T(1),
  ...extra,
});

/** A proposed prospect record at `https://{id}.example.org/post`, created and updated at T(1). */
export const prospect = (id: string, siteId: string, extra: Rec<'prospects'> = {}): Rec<'prospects'> => ({
  id,
  siteId,
  status: 'proposed',
  url: `https://${id}.example.org/post`,
  domain: `${id}.example.org`,
  createdAt: T(1),
  updatedAt: T(1),
  ...extra,
});

/** An active, unverified contact record at `{id}@example.org`, created and updated at T(1). */
export const contact = (id: string, prospectId: string, extra: Rec<'contacts'> = {}): Rec<'contacts'> => ({
  id,
  prospectId,
  email: `${id}@example.org`,
  status: 'active',
  verificationStatus: 'unverified',
  createdAt: T(1),
  updatedAt: T(1),
  ...extra,
});

/** A draft record of prospect `prospectId` to contact `contactId`, status draft, created and updated at T(2). */
export const draft = (
  id: string,
  siteId: string,
  prospectId: string,
  contactId: string,
  extra: Rec<'drafts'> = {},
): Rec<'drafts'> => ({
  id,
  siteId,
  prospectId,
  contactId,
  status: 'draft',
  createdAt: T(2),
  updatedAt: T(2),
  ...extra,
});

/** An open, unclassified thread record (mailbox thread `gm-{id}`) without an outcome, updated at T(2). */
export const thread = (
  id: string,
  siteId: string,
  prospectId: string,
  contactId: string,
  extra: Rec<'threads'> = {},
): Rec<'threads'> => ({
  id,
  siteId,
  prospectId,
  contactId,
  threadId: `gm-${id}`,
  status: 'open',
  outcome: 'none',
  classification: 'unclassified',
  updatedAt: T(2),
  ...extra,
});

/** A pending outreach backlink from `https://{id}.example.org/` to `https://acme.test/`, created and updated at T(2). */
export const backlink = (id: string, siteId: string, extra: Rec<'backlinks'> = {}): Rec<'backlinks'> => ({
  id,
  siteId,
  source: 'outreach',
  acquisitionOrigin: 'unknown',
  sourceUrl: `https://${id}.example.org/`,
  targetUrl: 'https://acme.test/',
  status: 'pending',
  createdAt: T(2),
  updatedAt: T(2),
  ...extra,
});

/**
 * The route tests' import document: acct_a (pro until 2027) owns prj_a1 (site_a1 "Blog",
 * site_a2 "Shop") and prj_a2 (site_a3); acct_b (free) owns prj_b1 (site_b1). So each list has a
 * site beside it, a project beside it in the same account, and another account to keep out.
 * `collections` (the route's own records, checked by the import) are added as given.
 */
export function routeFixture(collections: Record<string, unknown[]> = {}): Record<string, unknown[]> {
  return {
    accounts: [
      account('acct_a', { email: 'a@acme.test', name: 'Acme', planExpiresAt: '2027-01-01T00:00:00Z' }),
      account('acct_b', { email: 'b@bravo.test', name: 'Bravo', plan: 'free' }),
    ],
    projects: [
      project('prj_a1', 'acct_a', { name: 'Acme one' }),
      project('prj_a2', 'acct_a', { name: 'Acme two' }),
      project('prj_b1', 'acct_b', { name: 'Bravo' }),
    ],
    sites: [
      site('site_a1', 'prj_a1', { name: 'Blog', domain: 'acme.test', url: 'https://acme.test' }),
      site('site_a2', 'prj_a1', { name: 'Shop', domain: 'shop.acme.test', url: 'https://shop.acme.test' }),
      site('site_a3', 'prj_a2', { name: 'Other', domain: 'two.acme.test', url: 'https://two.acme.test' }),
      site('site_b1', 'prj_b1', { name: 'Bravo', domain: 'bravo.test', url: 'https://bravo.test' }),
    ],
    ...collections,
  };
}
