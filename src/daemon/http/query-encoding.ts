/**
 * Query parameters whose percent-escapes are not UTF-8 (`%ff`, or `%ed%a0%80`, the bytes of a lone surrogate)
 * are refused. Fastify's query parser keeps such a value undecoded, so a filter would fail on its `%` and a role
 * name would be taken literally: neither is what the client meant (docs/decisions.md, "Input bounds").
 */
import { fieldError } from '../../model/errors.js';

/** A `%` that starts no escape is taken literally, as the query parser does. */
const BARE_PERCENT = /%(?![0-9a-fA-F]{2})/g;

/** Longest parameter name an error repeats. */
const MAX_NAME_CHARS = 256;

/** `text` decoded as the query parser does, or undefined when its escapes are not UTF-8. */
function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(BARE_PERCENT, '%25').replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** Throws a field error naming the first parameter of `url`'s query whose escapes are not UTF-8. */
export function checkQueryEncoding(url: string): void {
  const start = url.indexOf('?');
  // Most requests have no escape at all: nothing to decode again.
  if (start < 0 || !url.includes('%', start)) return;
  for (const pair of url.slice(start + 1).split('&')) {
    if (!pair.includes('%') || decoded(pair) !== undefined) continue;
    const eq = pair.indexOf('=');
    const name = decoded(eq < 0 ? pair : pair.slice(0, eq));
    throw fieldError(
      name !== undefined && name.length <= MAX_NAME_CHARS ? name : '(query)',
      'is not percent-encoded UTF-8',
    );
  }
}
