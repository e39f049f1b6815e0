/**
 * One account's generated records of the demo dataset (`./demo.ts`), one function per
 * collection. They draw from one seeded PRNG in a fixed order (keywords, blocked domains,
 * discovery jobs, prospects with their contacts, the contact-discovery jobs' subjects, email
 * connections and senders, drafts, threads, leads, backlinks): reordering the calls, or the draws
 * inside one, changes every record after it. test/seed.test.ts pins the document's checksum. The
 * prospecting records are built here, the rest in `./outreach.ts`; what they share is `./account-build.ts`.
 */
import {
  CONTACT_STATUSES,
  JOB_STATUSES,
  JOB_TYPES,
  PROSPECT_STATUSES,
  VERIFICATION_STATUSES,
} from '../domain/enums.js';
import {
  DAY,
  FIRST_NAMES,
  HOUR,
  LAST_NAMES,
  OPPORTUNITIES,
  ROLES,
  TOPICS,
  iso,
  pad,
  type SiteSpec,
  type Topic,
} from './vocabulary.js';
import type { AccountBuild, ProspectSpec, DemoDocument, Sizes, WeightedSite } from './account-build.js';
import type { Rng } from './rng.js';
import { addEmailAccounts, addDrafts, addThreads, addLeads, addBacklinks } from './outreach.js';

/** Builds one account's records into `doc`. Sites are given with a weight: records follow it. */
export function buildAccount(
  doc: DemoDocument,
  rng: Rng,
  key: string,
  sites: WeightedSite[],
  sizes: Sizes,
  senderName: string,
): void {
  const siteOf = (): SiteSpec => {
    const total = sites.reduce((n, s) => n + s.weight, 0);
    let r = rng.next() * total;
    for (const s of sites) if ((r -= s.weight) < 0) return s;
    return sites[sites.length - 1]!;
  };
  const domainOf = (topic: Topic, i: number) =>
    `${rng.pick(TOPICS[topic].nouns)}${rng.pick(['notes', 'journal', 'guide', 'weekly', 'hub', 'insider', 'talk'])}${i % 3 === 0 ? '.test' : '.example'}`;
  const a: AccountBuild = { doc, rng, key, sites, sizes, senderName, siteOf, domainOf };

  addKeywords(a);
  addBlockedDomains(a);
  const jobs = addDiscoveryJobs(a);
  const prospects = addProspectsAndContacts(a, jobs);
  setContactDiscoverySubjects(a, prospects);
  addEmailAccounts(a);
  addDrafts(a, prospects);
  addThreads(a, prospects);
  addLeads(a);
  addBacklinks(a);
}

/** Keywords, 4–6 per site. */
function addKeywords(a: AccountBuild): void {
  const { doc, rng, key, sites } = a;
  let n = 0;
  for (const site of sites) {
    const words = [...TOPICS[site.topic].keywords];
    const count = rng.int(4, Math.min(6, words.length));
    for (let k = 0; k < count; k++) {
      const keyword = words.splice(rng.int(0, words.length - 1), 1)[0]!;
      doc.keywords.push({
        id: `kw_${key}_${pad(++n)}`,
        siteId: site.id,
        keyword,
        createdAt: iso(-rng.int(150, 180) * DAY + k * HOUR),
      });
    }
  }
}

/** Blocked domains, 3–4 per project. */
function addBlockedDomains(a: AccountBuild): void {
  const { doc, rng, key, sites } = a;
  let n = 0;
  for (const projectId of [...new Set(sites.map((s) => s.projectId))]) {
    const count = rng.int(3, 4);
    for (let k = 0; k < count; k++) {
      doc.blockedDomains.push({
        id: `bd_${key}_${pad(++n)}`,
        projectId,
        domain: `${rng.pick(['cheap', 'spammy', 'seo', 'linkfarm', 'bulk'])}-${rng.pick(['links', 'directory', 'backlinks', 'articles'])}${k}.example`,
        reason: k === 0 ? null : rng.pick(['link farm', 'competitor', 'asked not to be contacted', 'low quality']),
        createdAt: iso(-rng.int(100, 170) * DAY),
      });
    }
  }
}

/** Discovery jobs: both types, every status; queries in every status. Contact-discovery jobs get their subject in `setContactDiscoverySubjects`. */
function addDiscoveryJobs(a: AccountBuild): { jobIds: string[]; jobSite: Map<string, SiteSpec> } {
  const { doc, rng, key, sites, sizes, siteOf } = a;
  const jobIds: string[] = [];
  const jobSite = new Map<string, SiteSpec>();
  for (let j = 0; j < sizes.jobs; j++) {
    const site = j < sites.length ? sites[j]! : siteOf();
    const id = `job_${key}_${pad(j + 1)}`;
    const status = rng.cover(JOB_STATUSES, j);
    const type = j % 4 === 3 ? JOB_TYPES[1] : JOB_TYPES[0];
    const created = -rng.int(20, 160) * DAY + rng.int(0, 20) * HOUR;
    const done = status === 'completed' || status === 'failed';
    const queryCount = type === 'contact_discovery' ? 0 : rng.int(2, 5);
    const queries = [];
    for (let q = 0; q < queryCount; q++) {
      const qStatus =
        status === 'completed'
          ? q === queryCount - 1 && rng.chance(0.3)
            ? 'failed'
            : 'completed'
          : status === 'failed'
            ? q === 0
              ? 'failed'
              : rng.pick(['completed', 'failed'] as const)
            : status === 'running'
              ? (['completed', 'running', 'pending'] as const)[Math.min(q, 2)]!
              : 'pending';
      const started = qStatus === 'pending' ? null : iso(created + (q + 1) * 60_000);
      const raw = qStatus === 'completed' ? rng.int(10, 60) : 0;
      const unique = Math.floor(raw * rng.real(0.5, 0.9));
      queries.push({
        id: `dq_${key}_${pad(j + 1)}_${q + 1}`,
        query: `${rng.pick(TOPICS[site.topic].keywords)} ${rng.pick(['write for us', 'resources', 'best of 2026', 'guide', 'review', 'inurl:links'])}`,
        status: qStatus,
        opportunityType: rng.pick(OPPORTUNITIES),
        rawResultCount: raw,
        uniqueCandidateCount: unique,
        qualifiedCount: Math.floor(unique * rng.real(0.05, 0.3)),
        startedAt: started,
        completedAt: qStatus === 'completed' || qStatus === 'failed' ? iso(created + (q + 1) * 60_000 + 45_000) : null,
        errorCode: qStatus === 'failed' ? rng.pick(['search_timeout', 'provider_quota', 'blocked_by_robots']) : null,
        hasError: qStatus === 'failed',
      });
    }
    doc.discoveryJobs.push({
      id,
      siteId: site.id,
      type,
      status,
      subjectType: type === 'contact_discovery' ? 'prospect' : 'site',
      subjectId: type === 'contact_discovery' ? null : site.id, // filled in below once prospects exist
      currentAttempt: status === 'queued' ? 0 : status === 'failed' ? 3 : 1,
      maxAttempts: 3,
      scheduledAt: iso(created),
      canceledAt: status === 'canceled' ? iso(created + 2 * HOUR) : null,
      completedAt: done ? iso(created + 20 * 60_000) : null,
      createdAt: iso(created),
      updatedAt: iso(created + (done || status === 'canceled' ? 20 * 60_000 : 60_000)),
      queries,
    });
    jobIds.push(id);
    jobSite.set(id, site);
  }
  return { jobIds, jobSite };
}

/** Prospects, each with 1–3 contacts; a prospect may name one of its site's jobs as its source. */
function addProspectsAndContacts(
  a: AccountBuild,
  jobs: { jobIds: string[]; jobSite: Map<string, SiteSpec> },
): ProspectSpec[] {
  const { jobIds, jobSite } = jobs;
  const { doc, rng, key, sizes, siteOf, domainOf } = a;
  const prospects: ProspectSpec[] = [];
  let contactN = 0;
  for (let p = 0; p < sizes.prospects; p++) {
    const site = siteOf();
    const id = `prs_${key}_${pad(p + 1)}`;
    const domain = domainOf(site.topic, p);
    const page = rng.pick(TOPICS[site.topic].pages);
    const keyword = rng.pick(TOPICS[site.topic].keywords);
    const status =
      p < PROSPECT_STATUSES.length
        ? PROSPECT_STATUSES[p]!
        : rng.next() < 0.7
          ? 'proposed'
          : rng.pick(PROSPECT_STATUSES);
    const created = -rng.int(5, 150) * DAY + rng.int(0, 23) * HOUR;
    const sourceJob = jobIds.filter((j) => jobSite.get(j)!.id === site.id);
    const crawled = rng.chance(0.85);
    doc.prospects.push({
      id,
      siteId: site.id,
      sourceJobId: sourceJob.length && rng.chance(0.7) ? rng.pick(sourceJob) : null,
      source: rng.pick(['discovery', 'discovery', 'manual', 'import']),
      status,
      url: `https://${domain}/${page}`,
      normalizedUrl: `${domain}/${page}`,
      canonicalUrl: `https://${domain}/${page}/`,
      domain,
      title: `${keyword.replace(/^./, (c) => c.toUpperCase())}: ${rng.pick(['the complete guide', 'our top picks', 'what we learned', 'tested and reviewed', 'a beginner guide'])}`,
      description: `An article on ${domain} about ${keyword}.`,
      contentExcerpt: `We spent ${rng.int(2, 12)} weeks testing ${keyword} so you do not have to.`,
      pageType: rng.pick(['article', 'listicle', 'resource_page', 'review']),
      opportunityType: rng.pick(OPPORTUNITIES),
      suggestedPlacement: rng.pick([
        'In the resources section',
        'Next to the buying advice',
        'In the gear list',
        'In the further reading list',
      ]),
      contactPaths: [
        { url: `https://${domain}/contact`, label: 'Contact page' },
        ...(rng.chance(0.5) ? [{ email: `editor@${domain}`, label: 'Editor' }] : []),
      ],
      relevanceScore: rng.real(0.3, 0.99),
      qualityScore: rng.real(0.2, 0.95),
      riskScore: rng.real(0, status === 'blocked' ? 0.99 : 0.4),
      matchReasons: [`keyword: ${keyword}`, ...(rng.chance(0.5) ? [`${site.topic} niche`] : [])],
      riskFlags: status === 'blocked' ? ['link farm'] : rng.chance(0.2) ? ['many outbound links'] : [],
      domainAuthority: rng.int(8, 78),
      estimatedMonthlyTraffic: rng.int(2, 400) * 100,
      rankingPosition: rng.int(1, 40),
      rankingKeyword: keyword,
      crawlStatus: crawled ? 'crawled' : rng.pick(['pending', 'failed']),
      lastCrawledAt: crawled ? iso(created + 2 * HOUR) : null,
      createdAt: iso(created),
      updatedAt: iso(created + rng.int(2, 72) * HOUR),
    });
    const contacts: { id: string; email: string }[] = [];
    const count = rng.int(1, 3);
    for (let c = 0; c < count; c++) {
      const first = rng.pick(FIRST_NAMES);
      const last = rng.pick(LAST_NAMES);
      const [role, roleCategory] = rng.pick(ROLES);
      const index = contactN++;
      const status =
        index < CONTACT_STATUSES.length
          ? CONTACT_STATUSES[index]!
          : rng.chance(0.85)
            ? 'active'
            : rng.pick(CONTACT_STATUSES);
      const verificationStatus = rng.cover(VERIFICATION_STATUSES, index);
      const cid = `ct_${key}_${pad(index + 1)}`;
      const email =
        c === 0 && rng.chance(0.3) ? `hello@${domain}` : `${first.toLowerCase()}.${last.toLowerCase()}@${domain}`;
      doc.contacts.push({
        id: cid,
        prospectId: id,
        email,
        fullName: email.startsWith('hello@') ? null : `${first} ${last}`,
        role: email.startsWith('hello@') ? null : role,
        roleCategory: email.startsWith('hello@') ? null : roleCategory,
        company: domain.split('.')[0]!.replace(/^./, (ch) => ch.toUpperCase()),
        source: rng.pick(['crawl', 'contact_discovery', 'manual']),
        sourceProvider: rng.pick(['website', 'hunter', 'manual']),
        sourceUrl: `https://${domain}/contact`,
        sourceReference: rng.pick(['contact page', 'author bio', 'about page']),
        status,
        verificationStatus,
        lastVerifiedAt: verificationStatus === 'unverified' ? null : iso(created + rng.int(1, 5) * DAY),
        suppressionReason:
          status === 'suppressed'
            ? rng.pick(['unsubscribed', 'asked not to be contacted'])
            : status === 'bounced'
              ? 'hard bounce'
              : null,
        createdAt: iso(created + HOUR),
        updatedAt: iso(created + rng.int(1, 6) * DAY),
      });
      contacts.push({ id: cid, email });
    }
    prospects.push({ id, site, contacts, domain });
  }
  return prospects;
}

/** A contact-discovery job is about a prospect of its site. */
function setContactDiscoverySubjects(a: AccountBuild, prospects: readonly ProspectSpec[]): void {
  const { doc, rng, key } = a;
  for (const job of doc.discoveryJobs) {
    if (job.type !== 'contact_discovery' || job.subjectId !== null || !job.id?.startsWith(`job_${key}_`)) continue;
    const candidates = prospects.filter((p) => p.site.id === job.siteId);
    job.subjectId = candidates.length ? rng.pick(candidates).id : null;
  }
}
