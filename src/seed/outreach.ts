/**
 * One account's demo records after its prospects (`./account.ts` calls these in this order):
 * email connections and senders, drafts, threads, leads and backlinks. They draw from the
 * account's PRNG after the prospecting records; reordering the calls, or the draws inside one,
 * changes every record after it (test/seed.test.ts pins the document's checksum).
 */
import {
  BACKLINK_STATUSES,
  CONNECTION_PROVIDERS,
  CONNECTION_STATUSES,
  DRAFT_STATUSES,
  HEALTH_STATUSES,
  LEAD_STAGES,
  LEAD_TIERS,
  LEAD_TYPES,
  SENDER_STATUSES,
  THREAD_CLASSIFICATIONS,
  THREAD_OUTCOMES,
  THREAD_STATUSES,
  WARMUP_STATUSES,
} from '../domain/enums.js';
import {
  CATEGORIES,
  CHECK_STATUS_OF,
  DAY,
  HOUR,
  PLATFORMS,
  PURPOSES,
  TOPICS,
  iso,
  pad,
  type SiteSpec,
} from './vocabulary.js';
import type { AccountBuild, ProspectSpec } from './account-build.js';

/**
 * Email connections and senders: every site has a connected connection with an active sender
 * (replies need one); a few more show the other providers and states.
 */
export function addEmailAccounts(a: AccountBuild): void {
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
export function addDrafts(a: AccountBuild, prospects: readonly ProspectSpec[]): void {
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
export function addThreads(a: AccountBuild, prospects: readonly ProspectSpec[]): void {
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
export function addLeads(a: AccountBuild): void {
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
export function addBacklinks(a: AccountBuild): void {
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
