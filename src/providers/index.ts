/**
 * The providers behind the write operations (decisions.md §10), chosen in the config file
 * (`providers.generator|mail|verifier|contactFinder`). Each role has an offline default that
 * needs no network, so demos and CI fixtures work anywhere, and a real adapter:
 *
 * | role          | offline default                                   | real adapter                              |
 * |---------------|---------------------------------------------------|-------------------------------------------|
 * | generator     | `template`: deterministic text from the prospect, contact, site and instruction | `openai`: any OpenAI-compatible chat-completions endpoint (`openai.*`) |
 * | mail          | `log`: records the message as sent, delivers nothing | `smtp`: nodemailer over `smtp.*`        |
 * | verifier      | `builtin`: syntax, disposable domains, DNS MX      | `http`: a verification service (`verifier.httpUrl`) |
 * | contactFinder | `builtin`: the prospect's stored page data         | `crawl`: fetches the prospect's pages (`crawl.*`, SSRF-guarded) |
 * | replyClassifier (inbox) | none: the inbox's phrases (workers/inbox/rules.ts) | with `generator: openai`: the same model (`openai.*`) |
 *
 * ## Magic inputs (for fixtures and demos, like a payment API's test cards)
 *
 * The offline defaults give a fixed outcome for addresses and domains under the reserved `.test`
 * top-level domain (RFC 2606), so a fixture can exercise every branch without a network:
 *
 * - verify contact (`providers.verifier: builtin`): an address at `valid.test` always verifies
 *   `valid`, at `invalid.test` → `invalid`, at `risky.test` → `risky`, at `unknown.test` →
 *   `unknown` (subdomains too, e.g. `ana@mail.valid.test`), with no DNS lookup. Besides: a
 *   malformed address → `invalid`; a disposable-mailbox domain (mailinator.com, yopmail.com, …)
 *   → `risky`.
 * - contact discovery (`providers.contactFinder: builtin`): a prospect whose `domain` ends with
 *   `.queued.test` is answered `queued` (202) with a `contact_discovery` job, which the discovery
 *   worker then completes from the stored data (or fails when there is none); one whose domain
 *   ends with `.notfound.test` is always `not_found`. Otherwise the finder reads the prospect's
 *   `contactPaths` (an `email` key, or a `mailto:` `url`; `name`/`fullName` and `role` are kept),
 *   then addresses in its `contentExcerpt` and `description`: a new address → `created`, one the
 *   prospect already has (case-insensitive) → `existing`, none → `not_found`.
 * - regenerate (`providers.generator: template`): the same draft and instruction always give the
 *   same message; the words `formal` and `short` (or `brief`, `concise`) in the instruction
 *   change the tone and length.
 * - reply (`providers.mail: log`): every message ends `sent` on the first attempt.
 */
import { requireProviderSettings, type Config } from '../config.js';
import type { Logger } from '../logger.js';
import { createBuiltinFinder, createCrawlFinder } from './contact-finder.js';
import { createOpenAiGenerator, createTemplateGenerator } from './generator.js';
import { createLogTransport, createSmtpTransport } from './mail.js';
import { createOpenAiReplyClassifier } from './reply-classifier.js';
import type { Providers } from './types.js';
import { createBuiltinVerifier, createHttpVerifier } from './verifier.js';

export * from './types.js';

/**
 * The providers the config names. Secrets are read from the environment variables the config
 * names (`openai.apiKeyEnv`, `smtp.passwordEnv`, `verifier.httpApiKeyEnv`), never from the file.
 * @throws ConfigError when a chosen adapter lacks a required setting (see `requireProviderSettings`).
 */
export function createProviders(
  config: Config,
  logger: Logger,
  env: Record<string, string | undefined> = process.env,
): Providers {
  requireProviderSettings(config, env);
  const { providers } = config;
  return {
    generator: providers.generator === 'openai' ? createOpenAiGenerator(config.openai, env) : createTemplateGenerator(),
    mail: providers.mail === 'smtp' ? createSmtpTransport(config.smtp, env) : createLogTransport(logger),
    verifier:
      providers.verifier === 'http'
        ? createHttpVerifier(config.verifier, env)
        : createBuiltinVerifier({ dnsTimeoutMs: config.verifier.dnsTimeoutMs }),
    contactFinder: providers.contactFinder === 'crawl' ? createCrawlFinder(config.crawl) : createBuiltinFinder(),
    ...(providers.generator === 'openai' ? { replyClassifier: createOpenAiReplyClassifier(config.openai, env) } : {}),
  };
}
