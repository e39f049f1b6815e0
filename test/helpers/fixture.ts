/** The small fixture (test/fixtures/small.json) read as the import document it is, for expected values. */
import { readFileSync } from 'node:fs';

export const SMALL: { [collection: string]: any[] } & { backlinks: any[]; leads: any[]; prospects: any[] } = JSON.parse(
  readFileSync(new URL('../fixtures/small.json', import.meta.url), 'utf8'),
);

/**
 * What the API shows for a fixture record: each field of `shown` as the document has it; a field
 * the document leaves out is null (an array empty, a boolean false); date-times in UTC.
 */
export function fromFixture(record: Record<string, unknown>, shown: Record<string, unknown>): Record<string, unknown> {
  const value = (key: string) => {
    const v = record[key];
    return key.endsWith('At') && typeof v === 'string' ? new Date(v).toISOString() : v;
  };
  return Object.fromEntries(
    Object.keys(shown).map((key) => [
      key,
      key in record ? value(key) : Array.isArray(shown[key]) ? [] : typeof shown[key] === 'boolean' ? false : null,
    ]),
  );
}
