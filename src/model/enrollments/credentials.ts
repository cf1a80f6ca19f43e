/**
 * An enrollment's token and JWT (parity: docs/reference-notes.md §7.1; docs/decisions.md, "Token storage"): the
 * token derives from the record id, the store keeps its hash and the JWT with its `jti` blanked, and every read
 * completes the JWT again. Shared by identity and router enrollments.
 */
import type { Ctx } from '../ctx.js';
import { fieldError } from '../errors.js';
import { requirePki } from '../pki.js';
import { jwtFromTemplate, jwtTemplate, tokenHash } from '../tokens.js';
import type { EnrollmentMethod } from '../../pki/index.js';

/** Parses a date-time that must lie after now (parity: §7.2, a 400 field error otherwise). */
export function futureDate(ctx: Ctx, field: string, value: unknown): Date {
  const t = typeof value === 'string' ? Date.parse(value) : NaN;
  if (Number.isNaN(t)) throw fieldError(field, `${field} must be a date-time`, value);
  if (t <= ctx.now().getTime()) throw fieldError(field, `${field} must be in the future`, value);
  return new Date(t);
}

/** The enrollment JWT of §7.1: `em`, `iss` = advertised URL, `sub` = identity, `jti` = token, `exp`. */
export function enrollmentJwt(
  ctx: Ctx,
  method: string,
  subject: string,
  token: string,
  expiresAt: Date,
): Promise<string> {
  const pki = requirePki(ctx);
  return pki.signEnrollmentJwt({ method: method as EnrollmentMethod, issuer: pki.issuer, subject, token, expiresAt });
}

/**
 * What the store keeps of enrollment `id`'s token and JWT: the token's hash and the JWT signed now with its
 * `jti` blanked. The token is derived from the id, so it stays the same across refreshes.
 */
export async function enrollmentSecrets(
  ctx: Ctx,
  e: { id: string; method: string; subject: string; expiresAt: Date },
): Promise<{ tokenHash: string; jwtTemplate: string }> {
  const token = ctx.tokens.token('enrollment', e.id);
  const jwt = await enrollmentJwt(ctx, e.method, e.subject, token, e.expiresAt);
  return { tokenHash: tokenHash(token), jwtTemplate: jwtTemplate(jwt, token) };
}

/** The token and JWT of a stored enrollment, as shown on every read. */
export function enrollmentCredentials(
  ctx: Ctx,
  row: { id?: unknown; jwtTemplate?: unknown },
): { token: string; jwt: string } {
  const token = ctx.tokens.token('enrollment', String(row.id));
  const template = row.jwtTemplate;
  return { token, jwt: jwtFromTemplate(typeof template === 'string' ? template : '', token) };
}
