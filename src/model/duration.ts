/** Go-style duration strings (`30m`, `90s`, `1h30m`, `500ms`): the config file's and the identity trace's. */
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDuration(text: string): number {
  const s = String(text).trim();
  if (/^\d+$/.test(s)) throw new Error(`duration "${s}" needs a unit (ms, s, m, h)`);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  for (const m of s.matchAll(re)) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    matched += m[0].length;
  }
  if (matched === 0 || matched !== s.length) throw new Error(`invalid duration "${s}"`);
  // A duration past what a Date can hold would make every expiry computed from it invalid.
  if (!Number.isSafeInteger(Math.round(total))) throw new Error(`duration "${s}" is too large`);
  return Math.round(total);
}
