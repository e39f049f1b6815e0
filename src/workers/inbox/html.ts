/**
 * The HTML of an inbound message as plain text (decisions.md §17: the stored `body` is "the HTML
 * part as plain text" when a message has no text part), read without holding the event loop:
 * through `BoundedHtmlParser` (../providers/bounded-html.ts: htmlparser2 in slices of 16 KiB with
 * a turn of the event loop between two, nothing read past 512 open elements), at most
 * `MAX_HTML_CHARS` of HTML, and within the caller's deadline.
 *
 * The text keeps what the inbox's rules read (./rules.ts): paragraphs and line breaks, a
 * list item as ` * item` (` 1. item` in an ordered list), and the lines of a `<blockquote>` (the
 * quoted original of most HTML replies) prefixed with `> `, so that the reply's own text is told
 * from the quote as in a text part. Whitespace runs become one space (kept as written in
 * `<pre>`); `<head>`, `<script>`, `<style>`, `<template>` and `<noscript>` give no text; links
 * give their text, images nothing.
 */
import { cut } from '../../domain/text.js';
import { BoundedHtmlParser, SLICE_CHARS, nextTurn } from '../../providers/bounded-html.js';

/** Characters of a message's HTML (all its HTML parts together) that are read; the rest is not. */
export const MAX_HTML_CHARS = 256 * 1024;

/** Elements whose content is no text of the message. */
const HIDDEN = new Set(['head', 'script', 'style', 'template', 'noscript', 'title']);
/** Elements that stand apart as paragraphs: a blank line before and after. */
const PARAGRAPHS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'hr']);
/** Elements that start and end a line. */
const LINES = new Set([
  'address',
  'article',
  'aside',
  'center',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'header',
  'li',
  'main',
  'nav',
  'ol',
  'section',
  'summary',
  'table',
  'tr',
  'ul',
]);

/** Builds the text as the parser reports elements and text. */
class TextWriter {
  text = '';
  /** Line breaks owed before the next text (at most 2: one blank line). */
  private breaks = 0;
  /** A space owed before the next word on the same line. */
  private space = false;
  private lineStart = true;
  /** What the next line starts with after its quote marks: a list item's bullet or number. */
  private bullet = '';
  private hidden = 0;
  private quotes = 0;
  private pre = 0;
  /** The open lists: the next number of an ordered one, null for a bulleted one. */
  private readonly lists: (number | null)[] = [];

  constructor(private readonly maxChars: number) {}

  get full(): boolean {
    return this.text.length >= this.maxChars;
  }

  open(name: string) {
    if (HIDDEN.has(name)) this.hidden++;
    if (name === 'br') this.newLine();
    else if (PARAGRAPHS.has(name)) this.breaks = 2;
    else if (LINES.has(name)) this.breaks = Math.max(this.breaks, 1);
    else if ((name === 'td' || name === 'th') && !this.lineStart) this.space = true;
    if (name === 'blockquote') this.quotes++;
    if (name === 'pre') this.pre++;
    if (name === 'ul') this.lists.push(null);
    if (name === 'ol') this.lists.push(1);
    if (name === 'li') {
      const at = this.lists.length - 1;
      const number = this.lists[at];
      if (typeof number === 'number') this.lists[at] = number + 1;
      this.bullet = typeof number === 'number' ? ` ${number}. ` : ' * ';
    }
  }

  close(name: string) {
    if (HIDDEN.has(name)) this.hidden = Math.max(0, this.hidden - 1);
    if (PARAGRAPHS.has(name)) this.breaks = 2;
    else if (LINES.has(name)) this.breaks = Math.max(this.breaks, 1);
    if (name === 'blockquote') this.quotes = Math.max(0, this.quotes - 1);
    if (name === 'pre') this.pre = Math.max(0, this.pre - 1);
    if (name === 'ul' || name === 'ol') this.lists.pop();
  }

  /** Text as the page holds it (entities decoded): words one space apart, or as written in `<pre>`. */
  addText(text: string) {
    if (this.hidden > 0 || this.full) return;
    if (this.pre > 0) {
      for (const [index, line] of text.split('\n').entries()) {
        if (index > 0) this.newLine();
        if (line) this.word(line);
      }
      return;
    }
    // `\s+` is one character class repeated: each split is linear in the text.
    for (const [index, word] of text.split(/\s+/).entries()) {
      if (index > 0) this.space = true;
      if (word) this.word(word);
    }
  }

  /** Ends the line (`<br>`, or a line of a `<pre>`). */
  private newLine() {
    this.owed();
    if (this.text.length > 0) this.text += '\n';
    this.lineStart = true;
    this.space = false;
  }

  /** Writes the line breaks owed, if the text has begun. */
  private owed() {
    if (this.breaks > 0 && this.text.length > 0) {
      this.text += '\n'.repeat(this.lineStart ? this.breaks - 1 : this.breaks);
      this.lineStart = true;
      this.space = false;
    }
    this.breaks = 0;
  }

  /** Writes `word` (no line break in it) after what is owed. */
  private word(word: string) {
    if (this.full) return;
    this.owed();
    if (this.lineStart) {
      this.text += '> '.repeat(this.quotes) + this.bullet;
      this.bullet = '';
      this.lineStart = false;
    } else if (this.space) this.text += ' ';
    this.space = false;
    this.text += word;
  }
}

/**
 * The text of `html` (see the module comment): of its first `MAX_HTML_CHARS` characters, at most
 * `maxChars` characters of text, trimmed.
 * @throws `signal`'s reason once it is aborted (checked between two slices).
 */
export async function htmlText(html: string, maxChars: number, signal: AbortSignal): Promise<string> {
  const writer = new TextWriter(maxChars);
  const parser = new BoundedHtmlParser({
    onopentag: (name) => writer.open(name),
    onclosetag: (name) => writer.close(name),
    ontext: (text) => writer.addText(text),
  });
  const read = cut(html, MAX_HTML_CHARS);
  for (let at = 0; at < read.length && !writer.full && !parser.truncated; at += SLICE_CHARS) {
    signal.throwIfAborted();
    await parser.write(read.slice(at, at + SLICE_CHARS));
    await nextTurn();
  }
  signal.throwIfAborted();
  parser.end();
  return cut(writer.text, maxChars).trim();
}
