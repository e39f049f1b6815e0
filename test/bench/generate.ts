/**
 * The benchmark dataset: a large, deterministic workspace written through the project's own
 * import code (`importDocument`, one transaction per chunk), so every row passes the same
 * validation, parent checks and triggers (FTS, and whatever else a migration adds) as a real
 * import.
 *
 * Shape (default sizes): 30 accounts, ~60 projects, ~120 sites; 1,000,000 backlinks with ~2
 * checks each, 200,000 prospects (150,000 with a contact), 200,000 leads, 100,000 drafts and
 * 100,000 threads (1–3 messages each). The bench account `acct_bench` (plan pro) owns the big
 * project `prj_bench_main`: 60 % of the backlinks (so page 20,000 of 25 exists), 40 % of the
 * prospects, leads, drafts and threads; the rest follow a Zipf-like spread over the other
 * projects. Records of each collection are spread over the two years before BASE_DATE in
 * generation order. Same sizes and version: the same database, row for row.
 *
 * The database is cached as `.bench/cache/<key>.db`, the key naming the generator version, the
 * sizes and a hash of the migrations, so a rerun skips generation:
 *
 *   node --import tsx test/bench/generate.ts [--scale 0.1] [--force]
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { SCOPES } from '../../src/domain/scopes.js';
import { importDocument, type ImportDocument } from '../../src/import/index.js';
import {
  BACKLINK_STATUSES,
  DRAFT_STATUSES,
  LEAD_STAGES,
  LEAD_TYPES,
  THREAD_CLASSIFICATIONS,
  THREAD_OUTCOMES,
  THREAD_STATUSES,
} from '../../src/domain/enums.js';
import { Rng } from '../../src/seed/rng.js';
import {
  CATEGORIES,
  DAY,
  DEMO_BASE_DATE,
  FIRST_NAMES,
  HOUR,
  LAST_NAMES,
  PLATFORMS as DEMO_PLATFORMS,
} from '../../src/seed/vocabulary.js';
import { sqliteStore } from '../helpers/stores.js';

/** Bump when the generated data changes, so cached databases are rebuilt. */
export const GENERATOR_VERSION = 2;

export const ROOT = resolve(import.meta.dirname, '../..');
export const BENCH_DIR = join(ROOT, '.bench');
const CACHE_DIR = join(BENCH_DIR, 'cache');

/** Raw bearer token of acct_bench, every scope (declared in the import document; only its hash is stored). */
export const BENCH_TOKEN = 'oapi_bench_every_scope_000000000000000000000000';
export const BENCH_ACCOUNT_ID = 'acct_bench';
export const BENCH_PROJECT_ID = 'prj_bench_main';
/** The bench project's sites, biggest first (share of the project's records). */
export const BENCH_SITES = [
  { id: 'site_bench_blog', share: 0.6 },
  { id: 'site_bench_shop', share: 0.3 },
  { id: 'site_bench_docs', share: 0.1 },
] as const;
/** Share of each collection that goes to the bench project. */
const BENCH_SHARE = { backlinks: 0.6, prospects: 0.4, leads: 0.4, outreach: 0.4 } as const;

/** Search terms of the load run; their frequencies in the generated text are set below. */
export const PROSPECT_SEARCH = 'ultralight';
export const LEAD_SEARCH = 'water filter';

export interface Sizes {
  backlinks: number;
  prospects: number;
  leads: number;
  drafts: number;
  threads: number;
}
export const FULL_SIZES: Sizes = {
  backlinks: 1_000_000,
  prospects: 200_000,
  leads: 200_000,
  drafts: 100_000,
  threads: 100_000,
};

export const scaled = (scale: number): Sizes =>
  Object.fromEntries(
    Object.entries(FULL_SIZES).map(([k, v]) => [k, Math.max(100, Math.round(v * scale))]),
  ) as unknown as Sizes;

const BASE_MS = Date.parse(DEMO_BASE_DATE);
const SPAN_MS = 730 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();
/** The time of record `i` of `n`: spread evenly over the span, oldest first, whole seconds. */
const timeOf = (i: number, n: number) => BASE_MS - SPAN_MS + Math.floor((i * SPAN_MS) / n / 1000) * 1000;

// ---- vocabulary --------------------------------------------------------------------------------
// Names, link categories and lead platforms are the demo seed's (src/seed/vocabulary.ts), cut to
// the lists this generator has always drawn from, so its data stays the same row for row.

const FIRST = FIRST_NAMES.slice(0, 16);
const LAST = LAST_NAMES.slice(0, 14);
const PLATFORMS = DEMO_PLATFORMS.filter(([platform]) => platform !== 'linkedin');

const NOUNS = [
  'trail',
  'summit',
  'camp',
  'ridge',
  'forest',
  'peak',
  'nomad',
  'journey',
  'atlas',
  'compass',
  'pedal',
  'gravel',
  'spoke',
  'signal',
  'pixel',
  'harbor',
  'canyon',
  'meadow',
  'river',
  'alpine',
];
const SUFFIXES = ['notes', 'journal', 'guide', 'weekly', 'hub', 'insider', 'talk', 'review', 'lab', 'daily'];
const KEYWORDS = [
  'hiking boots',
  'camping stove',
  'rain jacket',
  'sleeping bag',
  'trekking poles',
  'trail running shoes',
  'budget travel',
  'carry-on packing',
  'gravel bike',
  'bike maintenance',
  'gps watch',
  'offline maps',
  'backpacking tent',
  'down jacket',
  'headlamp',
];
const TITLE_TAILS = [
  'the complete guide',
  'our top picks',
  'what we learned',
  'tested and reviewed',
  'a beginner guide',
  'everything you need',
  'the 2026 update',
];
const PAGES = [
  'best-gear',
  'buying-guide',
  'resources',
  'gear-list',
  'beginner-tips',
  'reviews',
  'checklist',
  'links',
  'roundup',
  'faq',
];
const ANCHORS = [
  'this guide',
  'hiking boots',
  'read more',
  'our review',
  'the best tents',
  'here',
  'gear checklist',
  'camping stove test',
];
const SENTENCES = [
  'I have been looking for a reliable option for weeks and nothing fits my budget.',
  'Does anyone have a recommendation that survives a wet week in the mountains?',
  'We switched last year and the difference on long trips was obvious.',
  'The reviews online all look sponsored, so I would love honest opinions.',
  'Our group is planning a two week trip and we need to keep the weight down.',
  'I tried three brands already and returned all of them.',
];
/** Backlink status weights, in BACKLINK_STATUSES order. */
const BACKLINK_WEIGHTS = [0.08, 0.6, 0.07, 0.12, 0.03, 0.05, 0.05];

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const pad = (n: number, width = 7) => String(n).padStart(width, '0');

// ---- the workspace layout ----------------------------------------------------------------------

interface SiteSpec {
  id: string;
  projectId: string;
  domain: string;
}

interface Layout {
  doc: Required<
    Pick<
      ImportDocument,
      'accounts' | 'tokens' | 'projects' | 'sites' | 'keywords' | 'emailConnections' | 'emailSenders' | 'discoveryJobs'
    >
  >;
  sites: SiteSpec[];
  /** Picks a site for a record of a collection whose bench share is `share`. */
  siteFor(rng: Rng, share: number): SiteSpec;
}

function layout(rng: Rng): Layout {
  const createdMs = BASE_MS - SPAN_MS - 30 * DAY;
  const doc: Layout['doc'] = {
    accounts: [],
    tokens: [],
    projects: [],
    sites: [],
    keywords: [],
    emailConnections: [],
    emailSenders: [],
    discoveryJobs: [],
  };
  const sites: SiteSpec[] = [];
  const addSite = (id: string, projectId: string, name: string, domain: string) => {
    doc.sites.push({
      id,
      projectId,
      name,
      domain,
      url: `https://${domain}/`,
      status: 'active',
      createdAt: iso(createdMs),
      updatedAt: iso(createdMs),
    });
    sites.push({ id, projectId, domain });
    for (let k = 0; k < 5; k++)
      doc.keywords.push({
        id: `kw_${id}_${k}`,
        siteId: id,
        keyword: KEYWORDS[(k * 3 + sites.length) % KEYWORDS.length]!,
        createdAt: iso(createdMs + k * HOUR),
      });
    const conn = `conn_${id}`;
    doc.emailConnections.push({
      id: conn,
      siteId: id,
      provider: 'gmail',
      status: 'connected',
      accountEmail: `outreach@${domain}`,
      providerRegion: 'eu',
      hasError: false,
      connectedAt: iso(createdMs),
      lastTestedAt: iso(BASE_MS - DAY),
      createdAt: iso(createdMs),
      updatedAt: iso(BASE_MS - DAY),
    });
    doc.emailSenders.push({
      id: `snd_${id}`,
      siteId: id,
      connectionId: conn,
      source: 'oauth',
      status: 'active',
      verificationStatus: 'verified',
      displayName: `Outreach at ${name}`,
      email: `outreach@${domain}`,
      replyToEmail: null,
      dailyLimit: 50,
      healthStatus: 'healthy',
      warmupStatus: 'warmed',
      healthScore: 0.93,
      createdAt: iso(createdMs),
      updatedAt: iso(BASE_MS - DAY),
    });
    for (let j = 0; j < 2; j++) {
      const at = createdMs + (j + 1) * 90 * DAY;
      doc.discoveryJobs.push({
        id: `job_${id}_${j}`,
        siteId: id,
        type: 'prospect_discovery',
        status: 'completed',
        subjectType: 'site',
        subjectId: id,
        currentAttempt: 1,
        maxAttempts: 3,
        scheduledAt: iso(at),
        completedAt: iso(at + 20 * 60_000),
        createdAt: iso(at),
        updatedAt: iso(at + 20 * 60_000),
        queries: [0, 1, 2].map((q) => ({
          id: `dq_${id}_${j}_${q}`,
          query: `${KEYWORDS[(j + q) % KEYWORDS.length]} resources`,
          status: 'completed' as const,
          opportunityType: 'resource_page',
          rawResultCount: 40,
          uniqueCandidateCount: 30,
          qualifiedCount: 6,
          startedAt: iso(at + q * 60_000),
          completedAt: iso(at + q * 60_000 + 45_000),
          hasError: false,
        })),
      });
    }
  };

  // The bench account: the big project and a smaller one.
  doc.accounts.push({
    id: BENCH_ACCOUNT_ID,
    email: 'owner@bench.example',
    name: 'Bench Owner',
    plan: 'pro',
    planExpiresAt: '2099-01-01T00:00:00.000Z',
    createdAt: iso(createdMs),
    updatedAt: iso(createdMs),
  });
  doc.tokens.push({
    accountId: BENCH_ACCOUNT_ID,
    name: 'bench (every scope)',
    scopes: [...SCOPES],
    token: BENCH_TOKEN,
  });
  doc.projects.push({
    id: BENCH_PROJECT_ID,
    accountId: BENCH_ACCOUNT_ID,
    name: 'Bench main',
    createdAt: iso(createdMs),
    updatedAt: iso(createdMs),
  });
  for (const s of BENCH_SITES) addSite(s.id, BENCH_PROJECT_ID, cap(s.id.slice(11)), `${s.id.slice(11)}.bench.example`);
  const others: { site: SiteSpec; weight: number }[] = [];
  doc.projects.push({
    id: 'prj_bench_side',
    accountId: BENCH_ACCOUNT_ID,
    name: 'Bench side',
    createdAt: iso(createdMs),
    updatedAt: iso(createdMs),
  });
  addSite('site_bench_side_a', 'prj_bench_side', 'Side A', 'side-a.bench.example');
  addSite('site_bench_side_b', 'prj_bench_side', 'Side B', 'side-b.bench.example');
  others.push({ site: sites[3]!, weight: 1 / 2 }, { site: sites[4]!, weight: 1 / 3 });

  // 29 other accounts with 1–3 projects of 1–3 sites; Zipf-like weights by creation order.
  const plans = ['free', 'pro', 'lifetime'] as const;
  for (let a = 1; a < 30; a++) {
    const accountId = `acct_${pad(a, 3)}`;
    doc.accounts.push({
      id: accountId,
      email: `owner${a}@acct${a}.example`,
      name: `Account ${a}`,
      plan: plans[a % 3]!,
      planExpiresAt: a % 3 === 1 ? '2027-06-01T00:00:00.000Z' : null,
      createdAt: iso(createdMs),
      updatedAt: iso(createdMs),
    });
    const projects = rng.int(1, 3);
    for (let p = 0; p < projects; p++) {
      const projectId = `prj_${pad(a, 3)}_${p}`;
      doc.projects.push({
        id: projectId,
        accountId,
        name: `Project ${a}.${p}`,
        createdAt: iso(createdMs),
        updatedAt: iso(createdMs),
      });
      const count = rng.int(1, 3);
      for (let s = 0; s < count; s++) {
        const id = `site_${pad(a, 3)}_${p}_${s}`;
        addSite(id, projectId, `Site ${a}.${p}.${s}`, `${rng.pick(NOUNS)}-${rng.pick(SUFFIXES)}-${a}${p}${s}.example`);
        others.push({ site: sites[sites.length - 1]!, weight: 1 / (others.length + 2) });
      }
    }
  }
  const otherTotal = others.reduce((n, o) => n + o.weight, 0);
  const cumulative: number[] = [];
  let acc = 0;
  for (const o of others) cumulative.push((acc += o.weight / otherTotal));

  return {
    doc,
    sites,
    siteFor(r, share) {
      const x = r.next();
      if (x < share) {
        let y = x / share;
        for (let i = 0; i < BENCH_SITES.length; i++) if ((y -= BENCH_SITES[i]!.share) < 0) return sites[i]!;
        return sites[0]!;
      }
      const y = (x - share) / (1 - share);
      let lo = 0;
      let hi = cumulative.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cumulative[mid]! < y) lo = mid + 1;
        else hi = mid;
      }
      return others[lo]!.site;
    },
  };
}

// ---- record builders ---------------------------------------------------------------------------

const refDomain = (r: Rng) => `${r.pick(NOUNS)}${r.pick(SUFFIXES)}${r.int(1, 5000)}.example`;

function backlink(r: Rng, i: number, n: number, site: SiteSpec): NonNullable<ImportDocument['backlinks']>[number] {
  const created = timeOf(i, n);
  let x = r.next();
  let s = 0;
  while (s < BACKLINK_WEIGHTS.length - 1 && (x -= BACKLINK_WEIGHTS[s]!) >= 0) s++;
  const status = BACKLINK_STATUSES[s]!;
  const domain = refDomain(r);
  const sourceUrl = `https://${domain}/${r.pick(PAGES)}/${i.toString(36)}`;
  const targetUrl = `https://${site.domain}/${r.pick(PAGES)}`;
  const anchor = r.pick(ANCHORS);
  const checkCount = status === 'pending' ? r.int(0, 1) : r.int(1, 3);
  const checks = [];
  let last: number | null = null;
  for (let c = 0; c < checkCount; c++) {
    const at = Math.min(BASE_MS - HOUR, created + (c + 1) * r.int(3, 40) * DAY);
    const error = status === 'error' && c === checkCount - 1;
    const found = !error && status !== 'lost' && status !== 'closed';
    checks.push({
      id: `blc_${pad(i)}_${c}`,
      status: error ? 'error' : found ? 'live' : 'lost',
      requestedSourceUrl: sourceUrl,
      finalSourceUrl: error ? null : sourceUrl,
      httpStatus: error ? null : found ? 200 : r.pick([200, 404, 410]),
      targetFound: found,
      observedTargetUrl: found ? targetUrl : null,
      observedAnchor: found ? anchor : null,
      observedRel: found && r.chance(0.3) ? ['nofollow'] : [],
      hasError: error,
      checkedAt: iso(at),
    });
    last = Math.max(last ?? 0, at);
  }
  return {
    id: `bl_${pad(i)}`,
    siteId: site.id,
    source: r.chance(0.7) ? 'outreach' : 'discovered',
    acquisitionOrigin: r.pick(['outreach', 'organic', 'unknown']),
    sourceUrl,
    targetUrl,
    category: r.pick(CATEGORIES),
    status,
    observedAnchor: checkCount ? anchor : null,
    lastCheckedAt: last === null ? null : iso(last),
    createdAt: iso(created),
    updatedAt: iso(last ?? created),
    checks,
  };
}

type Outreach = Required<Pick<ImportDocument, 'prospects' | 'contacts' | 'drafts' | 'threads'>>;

/** Prospect `i` with its contact (3 in 4 prospects have one) and, for some, a draft and a thread. */
function prospect(
  r: Rng,
  i: number,
  sizes: Sizes,
  site: SiteSpec,
  out: Outreach,
  counters: { contacts: number; drafts: number; threads: number },
): void {
  const created = timeOf(i, sizes.prospects);
  const domain = refDomain(r);
  const keyword = r.pick(KEYWORDS);
  // ~3 % of prospects mention the search term.
  const special = r.chance(0.03) ? `${PROSPECT_SEARCH} ` : '';
  const id = `prs_${pad(i)}`;
  const page = r.pick(PAGES);
  out.prospects.push({
    id,
    siteId: site.id,
    sourceJobId: null,
    source: r.pick(['discovery', 'manual', 'import']),
    status: r.chance(0.75) ? 'proposed' : r.pick(['rejected', 'blocked'] as const),
    url: `https://${domain}/${page}`,
    normalizedUrl: `${domain}/${page}`,
    canonicalUrl: `https://${domain}/${page}/`,
    domain,
    title: `${cap(special)}${cap(keyword)}: ${r.pick(TITLE_TAILS)}`,
    description: `An article on ${domain} about ${special}${keyword}, with ${r.int(5, 40)} products compared and a buying guide.`,
    contentExcerpt: `We spent ${r.int(2, 12)} weeks testing ${keyword} so you do not have to. ${r.pick(SENTENCES)}`,
    pageType: r.pick(['article', 'listicle', 'resource_page', 'review']),
    opportunityType: r.pick(['resource_page', 'guest_post', 'link_insertion', 'broken_link']),
    suggestedPlacement: r.pick(['In the resources section', 'Next to the buying advice', 'In the gear list']),
    contactPaths: [{ url: `https://${domain}/contact`, label: 'Contact page' }],
    relevanceScore: r.real(0.3, 0.99),
    qualityScore: r.real(0.2, 0.95),
    riskScore: r.real(0, 0.4),
    matchReasons: [`keyword: ${keyword}`],
    riskFlags: [],
    domainAuthority: r.int(8, 78),
    estimatedMonthlyTraffic: r.int(2, 400) * 100,
    rankingPosition: r.int(1, 40),
    rankingKeyword: keyword,
    crawlStatus: 'crawled',
    lastCrawledAt: iso(created + 2 * HOUR),
    createdAt: iso(created),
    updatedAt: iso(created + r.int(2, 72) * HOUR),
  });
  if (i % 4 === 3) return;
  const first = r.pick(FIRST);
  const last = r.pick(LAST);
  const contactId = `ct_${pad(i)}`;
  const email = `${first.toLowerCase()}.${last.toLowerCase()}@${domain}`;
  out.contacts.push({
    id: contactId,
    prospectId: id,
    email,
    fullName: `${first} ${last}`,
    role: 'Editor',
    roleCategory: 'editorial',
    company: cap(domain.split('.')[0]!),
    source: 'crawl',
    sourceProvider: 'website',
    sourceUrl: `https://${domain}/contact`,
    sourceReference: 'contact page',
    status: 'active',
    verificationStatus: r.pick(['unverified', 'valid', 'risky'] as const),
    createdAt: iso(created + HOUR),
    updatedAt: iso(created + DAY),
  });
  // Drafts and threads go to prospects with a contact, evenly, so they spread over time too.
  const c = counters.contacts++;
  const withContact = sizes.prospects - Math.floor(sizes.prospects / 4);
  const due = (size: number) => Math.floor(((c + 1) * size) / withContact) > Math.floor((c * size) / withContact);
  if (due(sizes.drafts)) {
    const d = counters.drafts++;
    out.drafts.push({
      id: `drf_${pad(d)}`,
      siteId: site.id,
      prospectId: id,
      contactId,
      status: r.pick(DRAFT_STATUSES),
      purpose: 'link_insertion',
      starredAt: null,
      createdAt: iso(created + 2 * HOUR),
      updatedAt: iso(created + 3 * HOUR),
      message: {
        id: `dmsg_${pad(d)}`,
        subject: `${cap(keyword)} resource for ${domain}`,
        body: `Hi ${first},\n\nI enjoyed your piece on ${keyword}. ${r.pick(SENTENCES)} We wrote a guide that could fit in your list.\n\nBest,\nBench`,
        personalization: { firstName: first, keyword },
        groundingSummary: `Article about ${keyword}`,
        generationProvider: 'template',
        generationModel: 'template-v1',
        createdAt: iso(created + 2 * HOUR),
        updatedAt: iso(created + 3 * HOUR),
      },
    });
  }
  if (due(sizes.threads)) {
    const t = counters.threads++;
    const count = r.int(1, 3);
    const messages = [];
    for (let m = 0; m < count; m++) {
      const outbound = m % 2 === 0;
      messages.push({
        id: `tmsg_${pad(t)}_${m}`,
        direction: outbound ? ('outbound' as const) : ('inbound' as const),
        fromEmail: outbound ? `outreach@${site.domain}` : email,
        toEmails: [outbound ? email : `outreach@${site.domain}`],
        ccEmails: [],
        subject: `${m ? 'Re: ' : ''}${cap(keyword)} resource for ${domain}`,
        body: r.pick(SENTENCES),
        sentAt: iso(created + (m + 1) * DAY),
      });
    }
    out.threads.push({
      id: `thr_${pad(t)}`,
      siteId: site.id,
      prospectId: id,
      contactId,
      threadId: `gm-${pad(t)}`,
      status: r.pick(THREAD_STATUSES),
      outcome: r.pick(THREAD_OUTCOMES),
      classification: r.pick(THREAD_CLASSIFICATIONS),
      createdAt: iso(created + DAY),
      updatedAt: iso(created + count * DAY),
      messages,
    });
  }
}

function lead(r: Rng, i: number, n: number, site: SiteSpec): NonNullable<ImportDocument['leads']>[number] {
  const posted = timeOf(i, n);
  const [platform, containers] = r.pick(PLATFORMS);
  const keyword = r.pick(KEYWORDS);
  // ~2 % of leads talk about the search term.
  const topic = r.chance(0.02) ? LEAD_SEARCH : keyword;
  const x = r.next();
  const tier = x < 0.15 ? 'hot' : x < 0.45 ? 'warm' : 'explore';
  const handle = `${r.pick(NOUNS)}_${r.pick(FIRST).toLowerCase()}${r.int(1, 999)}`;
  return {
    id: `ld_${pad(i)}`,
    siteId: site.id,
    platform,
    sourceContainer: r.pick(containers),
    kind: r.pick(['post', 'comment']),
    title: `Looking for a good ${topic}?`,
    body: `${r.pick(SENTENCES)} Any advice on a ${topic} for ${r.pick(['winter', 'summer', 'a long trip', 'beginners'])}? ${r.pick(SENTENCES)}`,
    authorHandle: handle,
    permalink: `https://${platform}.example/p/${i.toString(36)}`,
    score: r.real(0, 100),
    tier,
    leadType: r.pick(LEAD_TYPES),
    sentiment: r.pick(['positive', 'neutral', 'negative']),
    evidenceQuote: `Any advice on a ${topic}`,
    reason: `Asks about ${topic}`,
    stage: r.pick(LEAD_STAGES),
    feedback: null,
    dismissed: r.chance(0.1),
    redacted: r.chance(0.03),
    postedAt: iso(posted),
    firstSeenAt: iso(posted + HOUR),
    createdAt: iso(posted + HOUR),
  };
}

// ---- generation and the cache ------------------------------------------------------------------

const CHUNK = { backlinks: 20_000, prospects: 10_000, leads: 20_000 };

export interface Generated {
  counts: Record<string, number>;
  seconds: number;
  perCollection: Record<string, number>;
}

/** Writes the whole dataset into the (migrated, empty) database at `path`. */
export async function generate(path: string, sizes: Sizes, log: (line: string) => void = () => {}): Promise<Generated> {
  const started = performance.now();
  const store = await openStore(path);
  try {
    await migrate(store);
    // Connection settings for a bulk load; the rows are the same either way. temp_store: the
    // statement journals of inserts that fire triggers stay in memory instead of /var/tmp.
    sqliteStore(store).sqlite.exec('PRAGMA cache_size = -262144');
    sqliteStore(store).sqlite.exec('PRAGMA synchronous = OFF');
    sqliteStore(store).sqlite.exec('PRAGMA temp_store = MEMORY');
    const nowIso = iso(BASE_MS);
    const rng = new Rng(20261001);
    const lay = layout(rng);
    const counts: Record<string, number> = {};
    const perCollection: Record<string, number> = {};
    const add = (summary: { counts: Record<string, number> }) => {
      for (const [k, v] of Object.entries(summary.counts)) counts[k] = (counts[k] ?? 0) + v;
    };
    const timed = async (name: string, fn: () => Promise<void>) => {
      const t = performance.now();
      await fn();
      perCollection[name] = (performance.now() - t) / 1000;
      log(`  ${name}: ${perCollection[name]!.toFixed(1)} s`);
    };
    await timed('workspace', async () => add(await importDocument(store, lay.doc, { nowIso })));

    await timed('prospects+contacts+drafts+threads', async () => {
      const r = new Rng(1);
      const counters = { contacts: 0, drafts: 0, threads: 0 };
      for (let from = 0; from < sizes.prospects; from += CHUNK.prospects) {
        const out: Outreach = { prospects: [], contacts: [], drafts: [], threads: [] };
        for (let i = from; i < Math.min(sizes.prospects, from + CHUNK.prospects); i++)
          prospect(r, i, sizes, lay.siteFor(r, BENCH_SHARE.prospects), out, counters);
        add(await importDocument(store, out, { nowIso }));
      }
    });
    await timed('leads', async () => {
      const r = new Rng(2);
      for (let from = 0; from < sizes.leads; from += CHUNK.leads) {
        const leads = [];
        for (let i = from; i < Math.min(sizes.leads, from + CHUNK.leads); i++)
          leads.push(lead(r, i, sizes.leads, lay.siteFor(r, BENCH_SHARE.leads)));
        add(await importDocument(store, { leads }, { nowIso }));
      }
    });
    await timed('backlinks+checks', async () => {
      const r = new Rng(3);
      for (let from = 0; from < sizes.backlinks; from += CHUNK.backlinks) {
        const backlinks = [];
        for (let i = from; i < Math.min(sizes.backlinks, from + CHUNK.backlinks); i++)
          backlinks.push(backlink(r, i, sizes.backlinks, lay.siteFor(r, BENCH_SHARE.backlinks)));
        add(await importDocument(store, { backlinks }, { nowIso }));
      }
    });
    sqliteStore(store).sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    return { counts, seconds: (performance.now() - started) / 1000, perCollection };
  } finally {
    await store.close();
  }
}

/** Hash of the migration files: a new or changed migration means a new database. */
function migrationsHash(): string {
  const dir = join(ROOT, 'sql/sqlite');
  const hash = createHash('sha256');
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort())
    hash.update(file).update(readFileSync(join(dir, file)));
  return hash.digest('hex').slice(0, 10);
}

export const cacheKey = (sizes: Sizes) =>
  `v${GENERATOR_VERSION}-bl${sizes.backlinks}-pr${sizes.prospects}-ld${sizes.leads}-dr${sizes.drafts}-th${sizes.threads}-m${migrationsHash()}`;

export interface Dataset {
  /** The cached database (never written by the bench: runs work on a copy). */
  path: string;
  key: string;
  sizes: Sizes;
  /** Set when this call generated it. */
  generated?: Generated;
  /** When it came from the cache: how its generation went. */
  earlier?: Generated;
  bytes: number;
}

/**
 * The cached database for `sizes`, generated first when missing (or with `force`). Older cached
 * databases of the same sizes (another generator version or migrations) are removed.
 */
export async function ensureDataset(
  sizes: Sizes,
  options: { force?: boolean; log?: (line: string) => void } = {},
): Promise<Dataset> {
  const log = options.log ?? (() => {});
  const key = cacheKey(sizes);
  mkdirSync(CACHE_DIR, { recursive: true });
  const path = join(CACHE_DIR, `${key}.db`);
  let generated: Generated | undefined;
  if (options.force || !existsSync(path)) {
    // Older databases of these sizes (another generator version or set of migrations) go.
    const sizePart = key.split('-').slice(1, 6).join('-');
    for (const file of readdirSync(CACHE_DIR))
      if (file.includes(`-${sizePart}-`)) rmSync(join(CACHE_DIR, file), { force: true });
    const tmp = join(CACHE_DIR, `${key}.partial.db`);
    log(`generating ${key} …`);
    generated = await generate(tmp, sizes, log);
    for (const suffix of ['-wal', '-shm']) rmSync(tmp + suffix, { force: true });
    renameSync(tmp, path);
    writeFileSync(`${path}.json`, JSON.stringify(generated));
    log(`generated in ${generated.seconds.toFixed(1)} s`);
  }
  const earlier = existsSync(`${path}.json`)
    ? (JSON.parse(readFileSync(`${path}.json`, 'utf8')) as Generated)
    : undefined;
  return { path, key, sizes, generated, earlier: generated ? undefined : earlier, bytes: statSync(path).size };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const argv = process.argv.slice(2);
  const at = argv.indexOf('--scale');
  const sizes = at >= 0 ? scaled(Number(argv[at + 1])) : FULL_SIZES;
  ensureDataset(sizes, { force: argv.includes('--force'), log: (l) => process.stdout.write(`${l}\n`) }).then(
    (d) => process.stdout.write(`${d.path} (${(d.bytes / 2 ** 20).toFixed(0)} MiB)${d.generated ? '' : ' (cached)'}\n`),
    (error: unknown) => {
      process.stderr.write(`generate: ${(error as Error).stack ?? String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
