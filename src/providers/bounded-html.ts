/**
 * Reading HTML that someone else wrote (the crawl contact finder's pages, the backlink monitor's
 * source pages) without holding the event loop: htmlparser2's streaming `Parser`, fed in slices
 * of `SLICE_CHARS` with a turn of the event loop between two slices, and stopped for good once
 * the page nests more than `MAX_OPEN_ELEMENTS` elements.
 *
 * Why the nesting bound: the parser keeps the open elements in an array that it shifts and
 * unshifts on every tag and searches on every end tag, so each tag costs time in the nesting
 * depth and a page of unclosed tags costs time in the square of its size (htmlparser2 12.0.0:
 * 1 MiB of `<div>` took 13.8 s, measured). Under the bound a tag costs at most a few hundred
 * steps, so the time is linear in the page.
 */
import { type Handler, Parser } from 'htmlparser2';
import { cut, withoutNul } from '../domain/text.js';

/** Open elements past which a page is not read on (its elements deeper than that are dropped). */
export const MAX_OPEN_ELEMENTS = 512;
/** Characters handed to the parser between two turns of the event loop. */
export const SLICE_CHARS = 16 * 1024;

/**
 * Longest text from someone else's page that is stored (a link's anchor text and `rel`, a name or
 * job title of a contact), characters, after whitespace is collapsed.
 */
export const MAX_STORED_CHARS = 500;
/** Longest URL from someone else's page that is stored (the href of a found link), characters. */
export const MAX_STORED_URL_CHARS = 2048;
/** Characters of a remote text read to make its stored form (whitespace may shrink them to fewer). */
const MAX_READ_CHARS = 64 * 1024;

/**
 * The stored form of a text from someone else's page: of its first 64 Ki characters, whitespace
 * collapsed to one space and trimmed, each NUL (U+0000, which no store may be given: issue #28)
 * replaced by U+FFFD, then at most `MAX_STORED_CHARS` (500) characters.
 */
export function storedText(text: string): string {
  return cut(withoutNul(cut(text, MAX_READ_CHARS).replace(/\s+/g, ' ').trim()), MAX_STORED_CHARS).trimEnd();
}

/**
 * The stored form of a URL from someone else's page: at most `MAX_STORED_URL_CHARS` (2,048)
 * characters, a percent-escape cut in two dropped, so what is stored is still a URI.
 */
export function storedUrl(url: string): string {
  return url.length <= MAX_STORED_URL_CHARS ? url : url.slice(0, MAX_STORED_URL_CHARS).replace(/%[0-9A-Fa-f]?$/, '');
}

/** Resolves on the next turn of the event loop, after the I/O and timers that are due. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The events a caller of `BoundedHtmlParser` handles (tag and attribute names lower-cased, entities decoded). */
export type HtmlEvents = Pick<Partial<Handler>, 'onopentag' | 'ontext' | 'onclosetag'>;

/**
 * A streaming HTML parser under the bounds above. `write` the page's text as it comes (each
 * write is sliced, with a turn of the event loop between slices), then `end()`. Once the page
 * nests deeper than `MAX_OPEN_ELEMENTS`, `truncated` is true and no further event is reported.
 */
export class BoundedHtmlParser {
  private readonly parser: Parser;
  private depth = 0;
  /** The page nested more than `MAX_OPEN_ELEMENTS` elements: what followed was not read. */
  truncated = false;

  constructor(events: HtmlEvents) {
    this.parser = new Parser(
      {
        onopentag: (name, attributes, implied) => {
          if (this.truncated) return;
          if (++this.depth > MAX_OPEN_ELEMENTS) {
            this.truncated = true;
            this.parser.pause();
            return;
          }
          events.onopentag?.(name, attributes, implied);
        },
        ontext: (text) => {
          if (!this.truncated) events.ontext?.(text);
        },
        onclosetag: (name, implied) => {
          if (this.truncated) return;
          this.depth--;
          events.onclosetag?.(name, implied);
        },
      },
      { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
    );
  }

  /** Feeds the next piece of the page, `SLICE_CHARS` at a time with a turn of the event loop between. */
  async write(text: string): Promise<void> {
    for (let at = 0; at < text.length && !this.truncated; at += SLICE_CHARS) {
      if (at > 0) await nextTurn();
      this.parser.write(text.slice(at, at + SLICE_CHARS));
    }
  }

  /** Ends the page: elements still open are closed (their `onclosetag` reported as implied). */
  end(): void {
    if (!this.truncated) this.parser.end();
  }
}
