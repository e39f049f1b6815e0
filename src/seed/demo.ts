/**
 * The deterministic demo dataset (`outreach-api seed --demo`, `serve --demo`, the `demo` test
 * fixture): an import document built from a seeded PRNG and a fixed base date, so the same seed
 * gives a byte-identical document on every run and machine. No `Math.random`, no clock.
 *
 * Two accounts: `acct_demo` (plan pro until 2030; 3 projects, 7 sites and every kind of record in
 * every state) and `acct_other` (plan free; a smaller set, the target of cross-account tests).
 * Every domain is under a reserved test TLD (`.test`, `.example`).
 *
 * Tokens are declared with fixed raw values so that CI can use them without reading anything:
 * `DEMO_TOKEN` (acct_demo) and `OTHER_TOKEN` (acct_other), each with every scope, no expiry.
 */
import type { Store } from '../db/connection.js';
import { SCOPES } from '../domain/scopes.js';
import { importDocument, type ImportDocument, type ImportSummary } from '../import/index.js';
import { buildAccount } from './account.js';
import type { DemoDocument, WeightedSite } from './account-build.js';
import { Rng } from './rng.js';
import { DAY, HOUR, iso } from './vocabulary.js';

/** Raw token of acct_demo: every scope, never expires. Not in our checksummed format (it is 49 characters), which imports accept. */
export const DEMO_TOKEN = 'oapi_demo_all_scopes_0000000000000000000000000000';
/** Raw token of acct_other: every scope, never expires. */
export const OTHER_TOKEN = 'oapi_other_all_scopes_000000000000000000000000000';
export const DEMO_TOKEN_ID = 'tok_demo_all_scopes';
export const OTHER_TOKEN_ID = 'tok_other_all_scopes';

export const DEMO_ACCOUNT_ID = 'acct_demo';
/**
 * acct_demo's password for the settings area (decisions.md §18), set by `serve --demo` when the
 * account has none; it signs in with the account's email, `owner@trailhead.test`.
 */
export const DEMO_PASSWORD = 'demo-password';
/**
 * A hash of `DEMO_PASSWORD` (`hashPassword`'s format and cost, with a salt made once), set by
 * `serve --demo` instead of hashing at every start: scrypt took 100–600 ms of each start on a fresh
 * (in-memory) database. The password is public, so its fixed salt protects nothing that a fresh
 * one would.
 */
export const DEMO_PASSWORD_HASH =
  'scrypt$ln=15,r=8,p=1$2966h6TQWGiXOahd1Oj3PA$HExv/9KXFBI9BzO0TDMxX95spdtHtI6C8nRdIPfmu2w';
export const OTHER_ACCOUNT_ID = 'acct_other';
/** acct_demo's main project and its blog: the site with the most of everything. */
export const DEMO_PROJECT_ID = 'prj_demo_main';
export const DEMO_SITE_ID = 'site_demo_blog';
/** acct_other's project and site. */
export const OTHER_PROJECT_ID = 'prj_other_main';
export const OTHER_SITE_ID = 'site_other_blog';

/** The default PRNG seed. */
export const DEMO_SEED = 20261001;

/**
 * The demo import document for `seed` (default `DEMO_SEED`). Pure: the same seed always gives
 * the same document, byte for byte once serialised.
 */
export function buildDemoDocument(seed = DEMO_SEED): ImportDocument {
  const rng = new Rng(seed);
  const doc: DemoDocument = {
    accounts: [
      {
        id: DEMO_ACCOUNT_ID,
        email: 'owner@trailhead.test',
        name: 'Trailhead Outdoor Co.',
        plan: 'pro',
        planExpiresAt: '2030-01-01T00:00:00.000Z',
        createdAt: iso(-200 * DAY),
        updatedAt: iso(-10 * DAY),
      },
      {
        id: OTHER_ACCOUNT_ID,
        email: 'owner@northwind.test',
        name: 'Northwind Bikes',
        plan: 'free',
        planExpiresAt: null,
        createdAt: iso(-190 * DAY),
        updatedAt: iso(-190 * DAY),
      },
    ],
    tokens: [
      {
        id: DEMO_TOKEN_ID,
        accountId: DEMO_ACCOUNT_ID,
        name: 'Demo token (every scope)',
        scopes: [...SCOPES],
        token: DEMO_TOKEN,
        expiresAt: null,
        revokedAt: null,
      },
      {
        id: OTHER_TOKEN_ID,
        accountId: OTHER_ACCOUNT_ID,
        name: 'Other account token (every scope)',
        scopes: [...SCOPES],
        token: OTHER_TOKEN,
        expiresAt: null,
        revokedAt: null,
      },
    ],
    projects: [
      {
        id: DEMO_PROJECT_ID,
        accountId: DEMO_ACCOUNT_ID,
        name: 'Trailhead Outdoor',
        createdAt: iso(-199 * DAY),
        updatedAt: iso(-30 * DAY),
      },
      {
        id: 'prj_demo_travel',
        accountId: DEMO_ACCOUNT_ID,
        name: 'Wanderlust Travel',
        createdAt: iso(-180 * DAY),
        updatedAt: iso(-40 * DAY),
      },
      {
        id: 'prj_demo_labs',
        accountId: DEMO_ACCOUNT_ID,
        name: 'Trailhead Labs',
        createdAt: iso(-170 * DAY),
        updatedAt: iso(-50 * DAY),
      },
      {
        id: OTHER_PROJECT_ID,
        accountId: OTHER_ACCOUNT_ID,
        name: 'Northwind Bikes',
        createdAt: iso(-189 * DAY),
        updatedAt: iso(-60 * DAY),
      },
    ],
    sites: [],
    keywords: [],
    blockedDomains: [],
    prospects: [],
    contacts: [],
    drafts: [],
    threads: [],
    emailConnections: [],
    emailSenders: [],
    discoveryJobs: [],
    leads: [],
    backlinks: [],
  };
  const demoSites: WeightedSite[] = [
    {
      id: DEMO_SITE_ID,
      projectId: DEMO_PROJECT_ID,
      name: 'Trailhead Blog',
      domain: 'blog.trailhead.test',
      topic: 'outdoor',
      weight: 5,
    },
    {
      id: 'site_demo_shop',
      projectId: DEMO_PROJECT_ID,
      name: 'Trailhead Shop',
      domain: 'shop.trailhead.test',
      topic: 'outdoor',
      weight: 2,
    },
    {
      id: 'site_demo_guides',
      projectId: DEMO_PROJECT_ID,
      name: 'Trailhead Guides',
      domain: 'guides.trailhead.test',
      topic: 'outdoor',
      weight: 2,
    },
    {
      id: 'site_demo_travel',
      projectId: 'prj_demo_travel',
      name: 'Wanderlust Journal',
      domain: 'wanderlust.example',
      topic: 'travel',
      weight: 2,
    },
    {
      id: 'site_demo_deals',
      projectId: 'prj_demo_travel',
      name: 'Wanderlust Deals',
      domain: 'deals.wanderlust.example',
      topic: 'travel',
      weight: 1,
    },
    {
      id: 'site_demo_labs',
      projectId: 'prj_demo_labs',
      name: 'Trailhead Labs',
      domain: 'labs.trailhead.test',
      topic: 'tech',
      weight: 1,
    },
    {
      id: 'site_demo_docs',
      projectId: 'prj_demo_labs',
      name: 'Trailhead Labs Docs',
      domain: 'docs.labs.trailhead.test',
      topic: 'tech',
      weight: 1,
    },
  ];
  const otherSites: WeightedSite[] = [
    {
      id: OTHER_SITE_ID,
      projectId: OTHER_PROJECT_ID,
      name: 'Northwind Journal',
      domain: 'northwind.test',
      topic: 'bikes',
      weight: 2,
    },
    {
      id: 'site_other_shop',
      projectId: OTHER_PROJECT_ID,
      name: 'Northwind Shop',
      domain: 'shop.northwind.test',
      topic: 'bikes',
      weight: 1,
    },
  ];
  for (const [i, s] of [...demoSites, ...otherSites].entries()) {
    doc.sites.push({
      id: s.id,
      projectId: s.projectId,
      name: s.name,
      domain: s.domain,
      url: `https://${s.domain}/`,
      status: 'active',
      createdAt: iso(-195 * DAY + i * DAY),
      updatedAt: iso(-20 * DAY + i * HOUR),
    });
  }
  buildAccount(
    doc,
    rng,
    'demo',
    demoSites,
    { backlinks: 400, prospects: 150, drafts: 40, threads: 28, leads: 200, jobs: 12 },
    'Mia',
  );
  buildAccount(
    doc,
    rng,
    'other',
    otherSites,
    { backlinks: 40, prospects: 20, drafts: 6, threads: 4, leads: 20, jobs: 3 },
    'Nils',
  );
  addMagicRecords(doc);
  return doc;
}

/**
 * The records that exercise the offline providers' magic inputs (src/providers/index.ts), with
 * fixed ids so the examples in docs/demo.md and other projects' CI can address them:
 * - `prs_demo_queued` (`press.queued.test`): contact discovery answers `queued`, then its job completes;
 * - `prs_demo_notfound` (`quiet.notfound.test`): contact discovery answers `not_found`;
 * - `prs_demo_verify` on site_demo_blog, with contacts `ct_demo_valid`, `ct_demo_invalid`,
 *   `ct_demo_risky`, `ct_demo_unknown` at `valid.test` … `unknown.test`: verify answers that status.
 * Added after the generated records, so the seeded stream (and every other record) is unchanged.
 */
function addMagicRecords(doc: DemoDocument): void {
  const created = iso(-3 * DAY);
  const prospect = (id: string, domain: string, contactPaths: Record<string, string>[]) => ({
    id,
    siteId: DEMO_SITE_ID,
    sourceJobId: null,
    source: 'manual',
    status: 'proposed' as const,
    url: `https://${domain}/`,
    normalizedUrl: `${domain}/`,
    canonicalUrl: `https://${domain}/`,
    domain,
    title: `Magic test prospect (${domain})`,
    description: `A demo prospect whose domain forces an outcome of the offline providers.`,
    contentExcerpt: null,
    pageType: 'article',
    opportunityType: 'resource_page',
    suggestedPlacement: null,
    contactPaths,
    relevanceScore: 0.5,
    qualityScore: 0.5,
    riskScore: 0.1,
    matchReasons: ['magic input'],
    riskFlags: [],
    domainAuthority: 10,
    estimatedMonthlyTraffic: 100,
    rankingPosition: null,
    rankingKeyword: null,
    crawlStatus: 'crawled',
    lastCrawledAt: created,
    createdAt: created,
    updatedAt: created,
  });
  doc.prospects.push(
    prospect('prs_demo_queued', 'press.queued.test', [{ email: 'desk@press.queued.test', label: 'Newsdesk' }]),
    prospect('prs_demo_notfound', 'quiet.notfound.test', []),
    prospect('prs_demo_verify', 'verify.example', []),
  );
  for (const verdict of ['valid', 'invalid', 'risky', 'unknown'] as const) {
    doc.contacts.push({
      id: `ct_demo_${verdict}`,
      prospectId: 'prs_demo_verify',
      email: `ana.${verdict}@${verdict}.test`,
      fullName: `Ana ${verdict.replace(/^./, (c) => c.toUpperCase())}`,
      role: 'Editor',
      roleCategory: 'editorial',
      company: 'Verify',
      source: 'manual',
      sourceProvider: 'manual',
      sourceUrl: null,
      sourceReference: null,
      status: 'active',
      verificationStatus: 'unverified',
      lastVerifiedAt: null,
      suppressionReason: null,
      createdAt: created,
      updatedAt: created,
    });
  }
}

/**
 * Imports the demo document into `store` (one transaction; re-seeding replaces the records).
 * @param options.nowIso the import time (token `createdAt`, activity check); default now.
 * @param options.seed PRNG seed (default `DEMO_SEED`).
 * @returns the import summary and `DEMO_TOKEN`, acct_demo's raw token with every scope.
 * @throws ImportError when the store refuses the data (e.g. acct_demo already has 10 other active tokens).
 */
export async function seedDemo(
  store: Store,
  options: { nowIso?: string; seed?: number } = {},
): Promise<{ summary: ImportSummary; token: string }> {
  const summary = await importDocument(store, buildDemoDocument(options.seed), { nowIso: options.nowIso });
  return { summary, token: DEMO_TOKEN };
}
