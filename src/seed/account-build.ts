/**
 * What the builders of one account's demo records share (`./account.ts`, `./outreach.ts`): the
 * document being built, the account's setting, and the prospects that drafts and threads pick from.
 */
import type { ImportDocument } from '../import/index.js';
import type { Rng } from './rng.js';
import type { SiteSpec, Topic } from './vocabulary.js';

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
export interface AccountBuild {
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
export interface ProspectSpec {
  id: string;
  site: SiteSpec;
  contacts: { id: string; email: string }[];
  domain: string;
}
