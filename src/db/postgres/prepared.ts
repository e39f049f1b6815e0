/**
 * Which statements go to PostgreSQL as named prepared statements. Sent as text, a statement is
 * parsed, analysed and planned by its backend every time; prepared on a connection, it is parsed
 * once per connection and PostgreSQL keeps its plan (deciding by itself, after five runs, whether
 * one generic plan serves every parameter or each run is planned for its values). The store's SQL
 * text is the same for every request of a route (kysely compiles values to parameters), so a few
 * dozen texts carry nearly every request.
 *
 * - A text is named the second time it is seen: a text seen once is not worth a statement on every
 *   connection.
 * - At most `NAMES_MAX` texts are named per process, each for the process's life (a prepared
 *   statement stays on its connection until the connection closes: PostgreSQL's memory per
 *   connection stays bounded); later texts go as text. The texts seen once are forgotten when
 *   `SEEN_MAX` of them are kept.
 * - Only statements that return or change rows (`SELECT`, `WITH`, `INSERT`, `UPDATE`, `DELETE`);
 *   never `BEGIN`, `COMMIT`, `SET` and the like, nor a text kept as text (`keepAsText`): a search's.
 *   After five runs of a prepared statement PostgreSQL may keep one generic plan, blind to the
 *   values; for a search (a pattern the trigram indexes serve or not, by its term) that made a leads
 *   search cost 18.1 ms of CPU per response against 4.8–8.2 ms sent as text, on the bench's data
 *   (docs/performance.md, "Prepared statements on PostgreSQL"). Planning each run for its values (`plan_cache_mode`) kept searches but
 *   took away most of the gain elsewhere: planning, not parsing, is most of a cheap statement's cost.
 */

/** Texts named per process at most. */
export const NAMES_MAX = 256;
/** Texts seen once kept at most (then forgotten, all together). */
export const SEEN_MAX = 4096;

/** The statements worth preparing: they return or change rows. */
const PREPARABLE = /^\s*(?:select|with|insert|update|delete)\b/i;

/**
 * The names of one process's prepared statements, by SQL text.
 * `nameOf(text)` is the text's name (`oa_1`, `oa_2`, …), or undefined when it goes as text.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  private readonly seenOnce = new Set<string>();
  private readonly textOnly = new Set<string>();

  constructor(
    private readonly limits: { namesMax: number; seenMax: number } = { namesMax: NAMES_MAX, seenMax: SEEN_MAX },
  ) {}

  nameOf(text: string): string | undefined {
    const name = this.names.get(text);
    if (name !== undefined || this.names.size >= this.limits.namesMax || this.textOnly.has(text)) return name;
    if (!PREPARABLE.test(text)) return undefined;
    if (!this.seenOnce.delete(text)) {
      if (this.seenOnce.size >= this.limits.seenMax) this.seenOnce.clear();
      this.seenOnce.add(text);
      return undefined;
    }
    const named = `oa_${this.names.size + 1}`;
    this.names.set(text, named);
    return named;
  }

  /**
   * Sends `text` as text from now on, planned for its values each time. A text named already keeps
   * its name. At most `seenMax` such texts are kept (then forgotten, all together).
   */
  keepAsText(text: string): void {
    if (this.textOnly.has(text)) return;
    if (this.textOnly.size >= this.limits.seenMax) this.textOnly.clear();
    this.textOnly.add(text);
  }

  /** How many texts are named. */
  get size(): number {
    return this.names.size;
  }
}
