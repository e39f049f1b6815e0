/**
 * One call to an OpenAI-compatible chat-completions endpoint (`POST {openai.baseUrl}/chat/completions`),
 * shared by the `openai` generator and the inbox's reply classifier. The API key is read from the
 * environment variable named by `openai.apiKeyEnv` and sent as a bearer token when set.
 */
import type { Config } from '../config.js';
import { ProviderError } from './types.js';

export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

/** The first choice's text and the model that answered (when it says). */
export interface ChatAnswer {
  content: string;
  model: string | null;
}

interface ChatCompletion {
  model?: unknown;
  choices?: { message?: { content?: unknown } }[];
}

/**
 * Sends `messages` to the endpoint and resolves with the answer's text.
 * @param temperature sampling temperature (0: the most likely answer).
 * @throws ProviderError (retryable) on a timeout (`openai.timeoutMs`), an unreachable endpoint, a
 * non-2xx answer, malformed JSON or an answer without text.
 */
export async function chatCompletion(
  options: Config['openai'],
  env: Record<string, string | undefined>,
  messages: ChatMessage[],
  temperature: number,
): Promise<ChatAnswer> {
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const apiKey = env[options.apiKeyEnv];
  let response: Response;
  try {
    response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      },
      body: JSON.stringify({ model: options.model, temperature, messages }),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    const name = (error as Error).name;
    throw new ProviderError(
      name === 'TimeoutError'
        ? `the generator did not answer within ${options.timeoutMs} ms`
        : 'the generator could not be reached',
    );
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new ProviderError(`the generator answered HTTP ${response.status}`);
  }
  let completion: ChatCompletion;
  try {
    completion = (await response.json()) as ChatCompletion;
  } catch {
    throw new ProviderError('the generator answered with malformed JSON');
  }
  const content = completion.choices?.[0]?.message?.content;
  if (typeof content !== 'string') throw new ProviderError('the generator answer has no message content');
  return { content, model: typeof completion.model === 'string' && completion.model ? completion.model : null };
}
