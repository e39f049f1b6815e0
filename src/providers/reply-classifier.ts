/**
 * The model's reading of a human reply (decisions.md §17): with `providers.generator: openai`,
 * the inbox asks the same OpenAI-compatible endpoint which of `interested`, `not_interested`,
 * `question` or `unclassified` a reply is. The reply's own text (bounded by the caller) and its
 * subject are sent, nothing else.
 */
import type { Config } from '../config.js';
import { HUMAN_REPLY_CLASSIFICATIONS, type HumanReplyClassification } from '../domain/enums.js';
import { chatCompletion } from './openai.js';
import { ProviderError, type ReplyClassifier } from './types.js';

const INSTRUCTION =
  'You read replies to link-outreach emails. Say whether the reply is interested (agrees, asks to go ahead), ' +
  'not_interested (declines, asks to stop), question (asks something without deciding) or unclassified (anything else). ' +
  'Answer with exactly one word: interested, not_interested, question or unclassified.';

/** The first label the answer names, as a whole word ("not_interested" before "interested"). */
function labelOf(answer: string): HumanReplyClassification | undefined {
  const words = answer
    .toLowerCase()
    .replace(/[^a-z_]+/g, ' ')
    .split(' ');
  return words
    .map((w) => HUMAN_REPLY_CLASSIFICATIONS.find((label) => label === w))
    .find((label) => label !== undefined);
}

/** The classifier over `openai.*` (the generator's endpoint, model and key). */
export function createOpenAiReplyClassifier(
  options: Config['openai'],
  env: Record<string, string | undefined> = process.env,
): ReplyClassifier {
  return {
    name: 'openai',
    async classify(reply) {
      const { content } = await chatCompletion(
        options,
        env,
        [
          { role: 'system', content: INSTRUCTION },
          { role: 'user', content: JSON.stringify({ subject: reply.subject, reply: reply.text }) },
        ],
        0,
      );
      const label = labelOf(content.slice(0, 200));
      if (!label) throw new ProviderError('the model answered no label', false);
      return label;
    },
  };
}
