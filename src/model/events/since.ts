/** Durations of the events' settings and `--since`: Go-style (`90m`, `24h`) plus whole days (`30d`). */
import { parseDuration } from '../duration.js';

const DAY_MS = 86_400_000;

/** A duration in milliseconds: `30d`, or what parseDuration takes. */
export function parseDays(text: string): number {
  const days = /^\s*(\d+)d\s*$/.exec(text);
  return days ? Number(days[1]) * DAY_MS : parseDuration(text);
}

/** The ISO time `text` names: an ISO time as it is, or a duration back from `now`. */
export function parseSince(text: string, now: Date): string {
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const t = Date.parse(text);
    if (Number.isNaN(t)) throw new Error(`invalid time "${text}"`);
    return new Date(t).toISOString();
  }
  return new Date(now.getTime() - parseDays(text)).toISOString();
}
