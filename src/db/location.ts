/**
 * Where the data is, as the configuration names it (`db`, `db.url`, `--db`, `OUTREACH_API_DB`):
 * a `postgres://` or `postgresql://` URL (decisions.md §16), or else a SQLite file's path.
 */

/** Whether `location` names a PostgreSQL database. */
export const isPostgresUrl = (location: string): boolean => /^postgres(?:ql)?:\/\//i.test(location);

/**
 * `location` fit to print in a log line, an error or the CLI's output: a PostgreSQL URL without
 * its password (from the authority, or a `password` or `sslpassword` parameter); a path as it is.
 * Never throws: a URL that does not parse prints as its scheme and host part only.
 */
export function describeLocation(location: string): string {
  if (!isPostgresUrl(location)) return location;
  try {
    const url = new URL(location);
    url.password = '';
    for (const name of [...url.searchParams.keys()]) if (/password/i.test(name)) url.searchParams.delete(name);
    return url.toString();
  } catch {
    // The userinfo (user:password@) may hold anything: print what follows the last '@' only.
    const scheme = /^[a-z]+:\/\//i.exec(location)?.[0] ?? '';
    const rest = location.slice(scheme.length);
    const host = rest.slice(rest.lastIndexOf('@') + 1).split(/[/?#]/)[0] ?? '';
    return `${scheme}${host}/…`;
  }
}

/**
 * `text` with the password of every PostgreSQL URL in it removed (`postgres://user:secret@host`
 * → `postgres://user@host`): for messages that might quote a URL given by the operator.
 */
export const withoutPasswords = (text: string): string =>
  text.replace(/(postgres(?:ql)?:\/\/[^\s:/@]*):[^\s@]*@/gi, '$1@').replace(/([?&]\w*password=)[^&\s]*/gi, '$1…');
