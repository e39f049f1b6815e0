/**
 * One account's generated records of the demo dataset (`./demo.ts`), one function per
 * collection. They draw from one seeded PRNG in a fixed order (keywords, blocked domains,
 * discovery jobs, prospects with their contacts, the contact-discovery jobs' subjects, email
 * connections and senders, drafts, threads, leads, backlinks): reordering the calls, or the draws
 * inside one, changes every record after it. test/seed.test.ts pins the document's checksum.
 */
import type { ImportDocument } from '../import/index.js';
import {
  BACKLINK_STATUSES,
  CONNECTION_PROVIDERS,
  CONNECTION_STATUSES,
  CONTACT_STATUSES,
  DRAFT_STATUSES,
  HEALTH_STATUSES,
  JOB_STATUSES,
  JOB_TYPES,
  LEAD_STAGES,
  LEAD_TIERS,
  LEAD_TYPES,
  PROSPECT_STATUSES,
  SENDER_STATUSES,
  THREAD_CLASSIFICATIONS,
  THREAD_OUTCOMES,
  THREAD_STATUSES,
  VERIFICATION_STATUSES,
  WARMUP_STATUSES,
} from '../domain/enums.js';
import type { Rng } from './rng.js';
import {
  CATEGORIES,
  CHECK_STATUS_OF,
  DAY,
  FIRST_NAMES,
  HOUR,
  LAST_NAMES,
  OPPORTUNITIES,
  PLATFORMS,
  PURPOSES,
  ROLES,
  TOPICS,
  iso,
  pad,
  type SiteSpec,
  type Topic,
} from './vocabulary.js';

/** The document being built, every collection present. */
export type DemoDocument = Required<ImportDocument>;

/** How many records of each kind one account gets. */
export interface Sizes {
  backlinks: number;
  prospects: number;
  drafts: number;
  threads: number;
  leads: number;
  jobs: number;
}

/** A site of the account, with the weight by which generated records fall on it. */
export type WeightedSite = SiteSpec & { weight: number };

/** What the per-collection builders share: the document, the PRNG and the account's setting. */
interface AccountBuild {
  doc: DemoDocument;
  rng: Rng;
  /** The id infix of the account's records (`demo`, `other`). */
  key: string;
  sites: WeightedSite[];
  sizes: Sizes;
  /** First name of the account's sender (signs drafts, local part of its addresses). */
  senderName: string;
  /** A site drawn by weight. */
  siteOf(): SiteSpec;
  /** A generated domain on the topic; `i % 3 === 0` gives a `.test` domain, else `.example`. */
  domainOf(topic: Topic, i: number): string;
}

/** A generated prospect, as the drafts and threads that follow pick from them. */
interface ProspectSpec {
  id: string;
  site: SiteSpec;
  contacts: { id: string; email: string }[];
  domain: string;
}

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

/**
 * Email connections and senders: every site has a connected connection with an active sender
 * (replies need one); a few more show the other providers and states.
 */
function addEmailAccounts(a: AccountBuild): void {
  const { doc, rng, key, sites, senderName } = a;
  // (replies need one); a few more show the other providers and states.
  let n = 0;
  let senderN = 0;
  const connection = (
    site: SiteSpec,
    provider: (typeof CONNECTION_PROVIDERS)[number],
    status: (typeof CONNECTION_STATUSES)[number],
    localPart: string,
  ) => {
    const id = `conn_${key}_${pad(++n)}`;
    const created = -rng.int(150, 175) * DAY;
    doc.emailConnections.push({
      id,
      siteId: site.id,
      provider,
      status,
      accountEmail: `${localPart}@${site.domain}`,
      providerRegion: provider === 'smtp' ? null : rng.pick(['eu', 'us']),
      hasError: status === 'error',
      connectedAt: status === 'disconnected' ? null : iso(created),
      lastTestedAt: iso(-rng.int(0, 5) * DAY),
      createdAt: iso(created),
      updatedAt: iso(-rng.int(0, 5) * DAY),
    });
    return id;
  };
  const sender = (
    site: SiteSpec,
    connectionId: string,
    status: (typeof SENDER_STATUSES)[number],
    localPart: string,
    i: number,
  ) => {
    const id = `snd_${key}_${pad(++senderN)}`;
    const created = -rng.int(140, 150) * DAY;
    doc.emailSenders.push({
      id,
      siteId: site.id,
      connectionId,
      source: rng.pick(['oauth', 'smtp']),
      status,
      verificationStatus: status === 'disabled' ? 'failed' : 'verified',
      displayName: `${senderName} from ${site.name}`,
      email: `${localPart}@${site.domain}`,
      replyToEmail: rng.chance(0.5) ? `replies@${site.domain}` : null,
      dailyLimit: rng.pick([20, 30, 40, 50]),
      healthStatus: rng.cover(HEALTH_STATUSES, i),
      warmupStatus: rng.cover(WARMUP_STATUSES, i),
      healthScore: rng.real(0.4, 1),
      createdAt: iso(created),
      updatedAt: iso(-rng.int(0, 10) * DAY),
    });
    return id;
  };
  sites.forEach((site, i) => {
    const conn = connection(
      site,
      CONNECTION_PROVIDERS[i % CONNECTION_PROVIDERS.length]!,
      'connected',
      senderName.toLowerCase(),
    );
    sender(site, conn, 'active', senderName.toLowerCase(), i);
  });
  // The other connection states and sender states, on the first sites.
  CONNECTION_STATUSES.filter((s) => s !== 'connected').forEach((status, i) => {
    const site = sites[i % sites.length]!;
    const conn = connection(
      site,
      CONNECTION_PROVIDERS[(i + 1) % CONNECTION_PROVIDERS.length]!,
      status,
      `outreach${i + 1}`,
    );
    sender(site, conn, SENDER_STATUSES.filter((s) => s !== 'active')[i % 2]!, `outreach${i + 1}`, sites.length + i);
  });
}

/** Drafts in every status, each for a prospect and one of its contacts. */
function addDrafts(a: AccountBuild, prospects: readonly ProspectSpec[]): void {
  const { doc, rng, key, sizes, senderName } = a;
  for (let d = 0; d < sizes.drafts; d++) {
    const prospect = prospects[(d * 7 + rng.int(0, 6)) % prospects.length]!;
    const contact = rng.pick(prospect.contacts);
    const status = rng.cover(DRAFT_STATUSES, d);
    const created = -rng.int(1, 60) * DAY + rng.int(0, 23) * HOUR;
    const updated = created + rng.int(0, 48) * HOUR;
    const first = doc.contacts.find((c) => c.id === contact.id)?.fullName?.split(' ')[0] ?? 'there';
    const keyword = rng.pick(TOPICS[prospect.site.topic].keywords);
    doc.drafts.push({
      id: `drf_${key}_${pad(d + 1)}`,
      siteId: prospect.site.id,
      prospectId: prospect.id,
      contactId: contact.id,
      status,
      purpose: rng.pick(PURPOSES),
      starredAt: rng.chance(0.2) ? iso(updated) : null,
      createdAt: iso(created),
      updatedAt: iso(updated),
      message: {
        id: `dmsg_${key}_${pad(d + 1)}`,
        subject: `${keyword.replace(/^./, (c) => c.toUpperCase())} resource for ${prospect.domain}`,
        body: `Hi ${first},\n\nI enjoyed your article on ${keyword}. We recently published a detailed guide on ${prospect.site.domain} that your readers may find useful as further reading.\n\nWould you consider linking to it?\n\nBest,\n${senderName}`,
        personalization: { firstName: first, keyword, domain: prospect.domain },
        groundingSummary: `The page on ${prospect.domain} covers ${keyword} and links to related resources.`,
        generationProvider: 'template',
        generationModel: 'template-v1',
        createdAt: iso(created),
        updatedAt: iso(updated),
      },
    });
  }
}

/** Threads in every status, outcome and classification, with outbound and inbound messages. */
function addThreads(a: AccountBuild, prospects: readonly ProspectSpec[]): void {
  const { doc, rng, key, sizes, senderName } = a;
  for (let t = 0; t < sizes.threads; t++) {
    const prospect = prospects[(t * 11 + 3) % prospects.length]!;
    const contact = rng.pick(prospect.contacts);
    const from = `${senderName.toLowerCase()}@${prospect.site.domain}`;
    const status = rng.cover(THREAD_STATUSES, t);
    const outcome = rng.cover(THREAD_OUTCOMES, t);
    const classification = rng.cover(THREAD_CLASSIFICATIONS, t);
    const subject = `Resource suggestion for ${prospect.domain}`;
    const count = status === 'awaiting_reply' ? 1 : rng.int(2, 4);
    const start = -rng.int(3, 45) * DAY + rng.int(8, 16) * HOUR;
    const messages = [];
    for (let m = 0; m < count; m++) {
      const outbound = m % 2 === 0;
      messages.push({
        id: `tm_${key}_${pad(t + 1)}_${m + 1}`,
        direction: outbound ? ('outbound' as const) : ('inbound' as const),
        fromEmail: outbound ? from : contact.email,
        toEmails: [outbound ? contact.email : from],
        ccEmails: [],
        subject: m === 0 ? subject : `Re: ${subject}`,
        body: outbound
          ? m === 0
            ? `Hi, I think our guide would be a good fit for your page on ${prospect.domain}. Would you take a look?`
            : 'Thanks for getting back to me! Here is the link and a short description you could use.'
          : rng.pick([
              'Sounds interesting, send me the link.',
              'What would you like in return?',
              'I am out of the office until Monday.',
              'We do not accept link requests, sorry.',
            ]),
        sentAt: iso(start + m * rng.int(4, 30) * HOUR),
      });
    }
    doc.threads.push({
      id: `thr_${key}_${pad(t + 1)}`,
      siteId: prospect.site.id,
      prospectId: prospect.id,
      contactId: contact.id,
      threadId: `${rng.pick(['gmail', 'outlook', 'smtp'])}-${key}-${pad(t + 1, 4)}`,
      status,
      outcome,
      classification,
      createdAt: messages[0]!.sentAt,
      updatedAt: messages[messages.length - 1]!.sentAt,
      messages,
    });
  }
}

/** Leads: every tier, stage and type, several platforms; some redacted, some dismissed. */
function addLeads(a: AccountBuild): void {
  const { doc, rng, key, sizes, siteOf } = a;
  for (let l = 0; l < sizes.leads; l++) {
    const site = siteOf();
    const [platform, containers] = rng.pick(PLATFORMS);
    const tier = rng.cover(LEAD_TIERS, l);
    const keyword = rng.pick(TOPICS[site.topic].keywords);
    const posted = -rng.int(0, 90) * DAY - rng.int(0, 23) * HOUR;
    const handle = `${rng.pick(['trail', 'city', 'gear', 'quiet', 'wander', 'pedal'])}_${rng.pick(['fan', 'nerd', 'rider', 'walker', 'writer'])}${rng.int(1, 99)}`;
    const id = `ld_${key}_${pad(l + 1)}`;
    doc.leads.push({
      id,
      siteId: site.id,
      platform,
      sourceContainer: rng.pick(containers),
      kind: rng.pick(['post', 'comment']),
      title: rng.pick([
        `Looking for ${keyword} recommendations`,
        `Is ${keyword} worth it?`,
        `My ${keyword} just broke`,
        `Alternatives to BigBrand ${keyword}?`,
      ]),
      body: `Long story short: I need advice on ${keyword}. Budget around ${rng.int(5, 40) * 10} euros. Any tips?`,
      authorHandle: handle,
      permalink: `https://${platform === 'hackernews' ? 'news.ycombinator' : platform}.example/${platform === 'reddit' ? 'r/posts/' : 'item/'}${id}`,
      score: tier === 'hot' ? rng.int(80, 99) : tier === 'warm' ? rng.int(55, 79) : rng.int(10, 54),
      tier,
      leadType: rng.cover(LEAD_TYPES, l),
      sentiment: rng.pick(['positive', 'neutral', 'negative']),
      evidenceQuote: `I need advice on ${keyword}`,
      reason: rng.pick([
        'Asks for recommendations',
        'Describes a problem the site solves',
        'Mentions a competitor',
        'Buying intent',
      ]),
      stage: rng.cover(LEAD_STAGES, l),
      feedback: rng.chance(0.15) ? 'up' : null,
      dismissed: l % 10 === 9,
      postedAt: iso(posted),
      firstSeenAt: iso(posted + rng.int(1, 12) * HOUR),
      // Redacted leads keep their text in the document; the API hides it.
      redacted: l % 25 === 7,
    });
  }
}

/** Backlinks: every status, 1–6 checks each (some with errors), newest check last. */
function addBacklinks(a: AccountBuild): void {
  const { doc, rng, key, sizes, siteOf, domainOf } = a;
  for (let b = 0; b < sizes.backlinks; b++) {
    const site = siteOf();
    const status = rng.cover(BACKLINK_STATUSES, b);
    const domain = domainOf(site.topic, b + 7);
    const sourceUrl = `https://${domain}/${rng.pick(TOPICS[site.topic].pages)}`;
    const targetUrl = `https://${site.domain}/${rng.pick(TOPICS[site.topic].pages)}`;
    const anchor = rng.pick([...TOPICS[site.topic].keywords, site.name, 'this guide', 'here']);
    const created = -rng.int(30, 180) * DAY + rng.int(0, 23) * HOUR;
    const count = rng.int(1, 6);
    const checks = [];
    let checkedAt = created;
    for (let c = 0; c < count; c++) {
      checkedAt += rng.int(1, 6) * DAY + rng.int(0, 23) * HOUR;
      const newest = c === count - 1;
      const checkStatus = newest ? CHECK_STATUS_OF[status] : rng.chance(0.85) ? 'live' : 'error';
      const hasError = checkStatus === 'error' || (newest && status === 'blocked' && rng.chance(0.5));
      const found = checkStatus === 'live' || checkStatus === 'changed';
      checks.push({
        id: `chk_${key}_${pad(b + 1, 4)}_${c + 1}`,
        status: checkStatus,
        requestedSourceUrl: sourceUrl,
        finalSourceUrl: hasError ? null : sourceUrl,
        httpStatus: hasError ? rng.pick([403, 500, 502, 503]) : checkStatus === 'lost' && rng.chance(0.3) ? 404 : 200,
        targetFound: found,
        observedTargetUrl: found ? targetUrl : null,
        observedAnchor: found ? (checkStatus === 'changed' ? `${anchor} (edited)` : anchor) : null,
        observedRel: found ? rng.pick([[], [], ['nofollow'], ['ugc'], ['sponsored'], ['nofollow', 'ugc']]) : [],
        hasError,
        checkedAt: iso(checkedAt),
      });
    }
    doc.backlinks.push({
      id: `bl_${key}_${pad(b + 1, 4)}`,
      siteId: site.id,
      source: 'outreach',
      acquisitionOrigin: 'unknown',
      sourceUrl,
      targetUrl,
      category: rng.pick(CATEGORIES),
      status,
      observedAnchor: status === 'live' || status === 'changed' ? anchor : null,
      lastCheckedAt: iso(checkedAt),
      createdAt: iso(created),
      updatedAt: iso(checkedAt),
      checks,
    });
  }
}
