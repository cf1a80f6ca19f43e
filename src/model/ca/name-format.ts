/**
 * Names of identities created by CA auto-enrollment (parity: docs/reference-notes.md §7.4).
 *
 * The CA's `identityNameFormat` holds literal placeholders, each replaced everywhere it occurs:
 * `[caName]`, `[caId]`, `[commonName]` (the client certificate's subject CN), `[requestedName]` (the `name` the
 * client sent, else the new identity's id) and `[identityId]`. When the name is taken, a six-digit counter is
 * appended to the formatted base (`base000001`, `base000002`, …), not cumulatively as the reference does, so
 * the names stay readable.
 */
import { identityNameTaken } from '../../store/identities.js';
import type { Ctx } from '../ctx.js';
import { DomainError } from '../errors.js';
import { DEFAULT_IDENTITY_NAME_FORMAT } from '../resources/ca.js';

export { DEFAULT_IDENTITY_NAME_FORMAT };

export interface NameFormatValues {
  caName: string;
  caId: string;
  commonName: string;
  requestedName: string;
  identityId: string;
}

/** Replaces every placeholder of `format` with its value. */
export function formatIdentityName(format: string, values: NameFormatValues): string {
  let out = format === '' ? DEFAULT_IDENTITY_NAME_FORMAT : format;
  for (const [key, value] of Object.entries(values)) out = out.split(`[${key}]`).join(value);
  return out;
}

/** Upper bound of the collision counter: beyond it something is wrong, and the enrollment is refused. */
const MAX_SUFFIX = 999_999;

/** `base` when no identity has that name, else the first free `base` + six-digit counter. */
export async function uniqueIdentityName(ctx: Ctx, base: string): Promise<string> {
  const taken = (name: string) => identityNameTaken(ctx.db, name);
  if (!(await taken(base))) return base;
  for (let i = 1; i <= MAX_SUFFIX; i++) {
    const candidate = `${base}${String(i).padStart(6, '0')}`;
    if (!(await taken(candidate))) return candidate;
  }
  throw new DomainError('COULD_NOT_VALIDATE', {
    cause: { field: 'name', reason: 'no free identity name for this format', value: base },
  });
}
