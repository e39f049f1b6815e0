/**
 * Parses durations (`tokens create --expires-in`, `wait --timeout`): `500ms`, `90s`, `45m`,
 * `12h`, `30d`, `2w` → milliseconds. @throws Error on anything else.
 */
export function parseDuration(text: string): number {
  const match = /^(\d+)\s*(ms|[smhdw])$/.exec(text.trim());
  if (!match)
    throw new Error(`invalid duration "${text}": use a whole number and a unit ms, s, m, h, d or w (e.g. 30d)`);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[
    match[2] as 'ms' | 's' | 'm' | 'h' | 'd' | 'w'
  ];
  const ms = Number(match[1]) * unit;
  if (ms <= 0) throw new Error('duration must be positive');
  return ms;
}
