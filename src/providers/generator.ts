/**
 * Draft generators: `template` (offline, deterministic) and `openai` (any OpenAI-compatible
 * chat-completions endpoint).
 */
import type { Config } from '../config.js';
import { withoutNul } from '../domain/text.js';
import { chatCompletion } from './openai.js';
import { ProviderError, type GeneratedMessage, type GenerationInput, type Generator } from './types.js';

const SUBJECT_MAX = 300;
const BODY_MAX = 10_000;

const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`);
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

function facts(input: GenerationInput) {
  const { site, prospect, contact } = input;
  const pageName = oneLine(prospect.title ?? '') || prospect.domain;
  const who = contact.fullName ?? contact.email;
  const summary =
    `Prospect "${clip(pageName, 120)}" (${prospect.domain}); contact ${who}${contact.role ? `, ${contact.role}` : ''}` +
    `${contact.company ? ` at ${contact.company}` : ''}; site ${site.name} (${site.domain}). Instruction: ${oneLine(input.instruction)}`;
  return { pageName, summary };
}

/**
 * The offline generator: the same input always gives the same message. It reads tone words in
 * the instruction (`formal`, `short`/`brief`/`concise`) and otherwise records the instruction
 * in `personalization` and `groundingSummary`.
 */
export function createTemplateGenerator(): Generator {
  return {
    name: 'template',
    async generate(input) {
      const { site, prospect, contact } = input;
      const { pageName, summary } = facts(input);
      const lower = input.instruction.toLowerCase();
      const formal = /\bformal\b/.test(lower);
      const short = /\b(short|shorter|brief|concise)\b/.test(lower);
      const firstName = contact.fullName?.trim().split(/\s+/)[0] ?? null;
      const excerpt = oneLine(prospect.contentExcerpt ?? prospect.description ?? '');
      const lines = [
        formal ? `Dear ${contact.fullName ?? 'editor'},` : `Hi ${firstName ?? 'there'},`,
        '',
        `I read "${clip(pageName, 200)}" on ${prospect.domain}${excerpt && !short ? `, in particular: "${clip(excerpt, 200)}"` : ''}.`,
        `I work on ${site.name} (${site.url})${prospect.suggestedPlacement ? `, which could fit ${oneLine(prospect.suggestedPlacement)}` : ''}.`,
      ];
      if (!short) {
        lines.push(
          prospect.opportunityType
            ? `It looked like a good ${prospect.opportunityType.replace(/_/g, ' ')} opportunity, so I wanted to reach out${contact.role ? ` to you as ${contact.role}` : ''}.`
            : `I thought it might be useful to your readers${contact.company ? ` at ${contact.company}` : ''}.`,
        );
      }
      lines.push(
        '',
        formal ? 'Would you consider it? Kind regards,' : 'Would you be open to it? Thanks,',
        `The ${site.name} team`,
      );
      return {
        subject: clip(`${formal ? 'Regarding' : 'Idea for'} ${pageName}`, SUBJECT_MAX),
        body: clip(lines.join('\n'), BODY_MAX),
        personalization: {
          contactFirstName: firstName,
          prospectTitle: prospect.title,
          prospectDomain: prospect.domain,
          siteName: site.name,
          tone: formal ? 'formal' : 'friendly',
          length: short ? 'short' : 'standard',
          instruction: input.instruction,
        },
        groundingSummary: summary,
        provider: 'template',
        model: 'template-v1',
      };
    },
  };
}

/**
 * The `openai` generator: POST `{baseUrl}/chat/completions` with `model` and two messages,
 * asking for a JSON object `{ "subject", "body" }`. Works with any server speaking that format
 * (OpenAI, Azure-style gateways, vLLM, Ollama, LM Studio…). The API key is read from the
 * environment variable named by `openai.apiKeyEnv` and sent as a bearer token when set.
 * @throws ProviderError on a timeout (`openai.timeoutMs`), a non-2xx answer or an unusable reply.
 */
export function createOpenAiGenerator(
  options: Config['openai'],
  env: Record<string, string | undefined> = process.env,
): Generator {
  return {
    name: 'openai',
    async generate(input) {
      const { summary } = facts(input);
      const prompt = {
        instruction: input.instruction,
        purpose: input.purpose,
        site: input.site,
        prospect: input.prospect,
        contact: input.contact,
        previousMessage: input.previous,
      };
      const { content, model } = await chatCompletion(
        options,
        env,
        [
          {
            role: 'system',
            content:
              'You write short, personal link-outreach emails. Use only the facts given. ' +
              'Answer with one JSON object {"subject": string (under 200 characters), "body": string (plain text)} and nothing else.',
          },
          { role: 'user', content: JSON.stringify(prompt) },
        ],
        0.7,
      );
      const message = parseMessage(content, input);
      return {
        ...message,
        personalization: {
          instruction: input.instruction,
          contactName: input.contact.fullName,
          prospectDomain: input.prospect.domain,
        },
        groundingSummary: summary,
        provider: 'openai',
        model: model ?? options.model,
      };
    },
  };
}

/** The `{ subject, body }` of a completion: JSON (possibly fenced), else "Subject: …" then the body. */
function parseMessage(content: string, input: GenerationInput): Pick<GeneratedMessage, 'subject' | 'body'> {
  // A NUL (U+0000) is no text a store may hold (issue #28): replaced, as in mail and pages.
  const unfenced = withoutNul(content)
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  let subject: string | undefined;
  let body: string | undefined;
  try {
    const parsed = JSON.parse(unfenced) as { subject?: unknown; body?: unknown };
    if (typeof parsed.subject === 'string') subject = parsed.subject;
    if (typeof parsed.body === 'string') body = parsed.body;
  } catch {
    const match = /^subject:\s*(.+)\n+([\s\S]+)$/i.exec(unfenced);
    if (match) [subject, body] = [match[1], match[2]];
    else body = unfenced;
  }
  subject =
    oneLine(subject ?? '') || input.previous?.subject || `Idea for ${input.prospect.title ?? input.prospect.domain}`;
  body = (body ?? '').trim();
  if (subject.length < 3 || body.length < 20)
    throw new ProviderError('the generator answer is too short to be a message', true);
  return { subject: clip(subject, SUBJECT_MAX), body: clip(body, BODY_MAX) };
}
