/**
 * The four provider roles behind the write operations (decisions.md §10). Each role is a small
 * interface (and the inbox's reply classifier, decisions.md §17); `./index.ts` picks an
 * implementation from the config. Providers know nothing of
 * HTTP or the store: they take plain facts and return plain results, and fail with
 * `ProviderError`.
 */

import type { HumanReplyClassification } from '../domain/enums.js';

/** A provider failure. `retryable` false means trying again cannot help (refused target, bad input). */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable = true,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

// ---- generator -------------------------------------------------------------------------------

/** What a draft message is grounded in. */
export interface GenerationInput {
  site: { name: string; domain: string; url: string };
  prospect: {
    title: string | null;
    url: string;
    domain: string;
    description: string | null;
    contentExcerpt: string | null;
    opportunityType: string | null;
    suggestedPlacement: string | null;
  };
  contact: { fullName: string | null; email: string; role: string | null; company: string | null };
  purpose: string | null;
  /** The caller's instruction (3–500 characters). */
  instruction: string;
  /** The draft's current message, if any. */
  previous: { subject: string; body: string } | null;
}

export interface GeneratedMessage {
  /** 3–300 characters. */
  subject: string;
  /** 20–10000 characters. */
  body: string;
  personalization: Record<string, unknown>;
  groundingSummary: string;
  /** `generationProvider` of the message. */
  provider: string;
  /** `generationModel` of the message. */
  model: string;
}

export interface Generator {
  readonly name: string;
  generate(input: GenerationInput): Promise<GeneratedMessage>;
}

// ---- mail ------------------------------------------------------------------------------------

export interface OutgoingMail {
  /** RFC 5322 Message-ID, `<…@…>`; stable per outbox message so a receiver can drop a duplicate. */
  messageId: string;
  from: { name: string | null; address: string };
  replyTo: string | null;
  to: string[];
  cc: string[];
  subject: string;
  text: string;
  /** The thread the outbox sends it in, and which attempt this is (1, 2, …); for observers such as the fixture's captured mail. */
  threadId?: string;
  attempt?: number;
}

export interface MailTransport {
  readonly name: string;
  /** Resolves once the message is accepted for delivery; rejects with `ProviderError`. */
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

// ---- verifier --------------------------------------------------------------------------------

export type VerificationResult = 'valid' | 'invalid' | 'risky' | 'unknown';

export interface Verifier {
  readonly name: string;
  verify(email: string): Promise<{ status: VerificationResult; reason: string }>;
}

// ---- contact finder --------------------------------------------------------------------------

/** The stored facts of a prospect a finder works from. */
export interface ProspectFacts {
  id: string;
  url: string;
  domain: string;
  title: string | null;
  description: string | null;
  contentExcerpt: string | null;
  /** The prospect's `contactPaths` items (objects). */
  contactPaths: unknown[];
}

export interface ContactCandidate {
  email: string;
  fullName: string | null;
  role: string | null;
  /** The page the address was found on, if any. */
  sourceUrl: string | null;
  /** Where on it: `contactPaths[0]`, `mailto`, `json-ld`, `text`, `description`, … */
  sourceReference: string;
}

export interface ContactFinder {
  readonly name: string;
  /**
   * True when finding needs work outside the process (network), so the request is answered
   * `queued` and a discovery job does it after the request commits.
   */
  defers(prospect: ProspectFacts): boolean;
  /** Candidates, best first; empty when none is found. */
  find(prospect: ProspectFacts): Promise<ContactCandidate[]>;
}

// ---- reply classifier --------------------------------------------------------------------------

/** Reads a human reply (decisions.md §17): with `providers.generator: openai`, the model. */
export interface ReplyClassifier {
  readonly name: string;
  /**
   * The classification of a reply from its subject and own text (bounded by the caller).
   * @throws ProviderError when the model fails or answers no classification.
   */
  classify(reply: { subject: string | null; text: string }): Promise<HumanReplyClassification>;
}

export interface Providers {
  generator: Generator;
  mail: MailTransport;
  verifier: Verifier;
  contactFinder: ContactFinder;
  /** Only with `providers.generator: openai`; without it the inbox's phrases classify human replies. */
  replyClassifier?: ReplyClassifier;
}
