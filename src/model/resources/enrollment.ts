/**
 * Outstanding enrollments: a one-time token (with its signed JWT) that lets an identity obtain its first
 * credential (parity: docs/reference-notes.md §7.1, §7.2). Created by admins directly or with an identity
 * (`enrollment: {ott | ottca | updb}`), consumed by the `/enroll*` endpoints (services/enroll.ts).
 *
 * Rules: at most one enrollment per method per identity (409 ENROLLMENT_EXISTS, cause field `method`, whether
 * the existing one has expired or not, as the reference); `expiresAt` must lie in the future; `updb` needs a
 * username no authenticator or other enrollment uses. As a courtesy the reference does not offer, an enrollment
 * for a method whose authenticator the identity already has is refused up front (409
 * MAX_AUTHENTICATOR_METHODS_REACHED) instead of failing at enroll time.
 */
import { Type } from '../schema-type.js';
import { authenticatorHasUsername, authenticatorIdOf } from '../../store/authenticators.js';
import { caExists } from '../../store/cas.js';
import { enrollmentIdOf, enrollmentsOfIdentities, updbEnrollmentHasUsername } from '../../store/enrollments.js';
import { identityExists } from '../../store/identities.js';
import { createEntity } from '../crud.js';
import { iso, type Ctx } from '../ctx.js';
import { DomainError, fieldError, isDomainError, type FieldCause } from '../errors.js';
import { newId } from '../ids.js';
import { jwtFromTemplate, jwtTemplate, tokenHash } from '../tokens.js';
import { requirePki } from '../pki.js';
import { attachRefs, IDENTITY_REF, type RefSpec } from '../refs.js';
import type { Input, ResourceDef, Row, WriteMode } from '../resource.js';
import type { EnrollmentMethod } from '../../pki/index.js';

/** The identity enrollment methods an admin can create (router methods come with routers). */
export const IDENTITY_ENROLLMENT_METHODS = ['ott', 'ottca', 'updb'] as const;
export type IdentityEnrollmentMethod = (typeof IDENTITY_ENROLLMENT_METHODS)[number];

/** The authenticator method an enrollment produces. */
export const authenticatorMethodFor = (method: string): 'cert' | 'updb' => (method === 'updb' ? 'updb' : 'cert');

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
 * What the store keeps of enrollment `id`'s token and JWT (docs/decisions.md, "Token storage"): the token's
 * hash and the JWT signed now with its `jti` blanked. The token is derived from the id, so it stays the same
 * across refreshes.
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
  const token = ctx.tokens.token('enrollment', row.id as string);
  return { token, jwt: jwtFromTemplate((row.jwtTemplate as string | null) ?? '', token) };
}

async function checkUpdbUsername(ctx: Ctx, username: unknown): Promise<string> {
  if (typeof username !== 'string' || username === '')
    throw fieldError('username', 'username is required for updb', username ?? null);
  if (username.length < 4 || username.length > 100)
    throw fieldError('username', 'username must be 4 to 100 characters', username);
  const [auth, enrollment] = await Promise.all([
    authenticatorHasUsername(ctx.db, username),
    updbEnrollmentHasUsername(ctx.db, username),
  ]);
  if (auth || enrollment) throw fieldError('username', 'username must be unique', username);
  return username;
}

async function prepare(ctx: Ctx, input: Input, mode: WriteMode): Promise<Input> {
  // Enrollments are never updated through the API; refresh sets expiresAt and jwt directly.
  if (mode !== 'create') return input;
  const out = { ...input };
  const method = out.method as IdentityEnrollmentMethod;
  const identityId = out.identityId as string;
  const expiresAt = futureDate(ctx, 'expiresAt', out.expiresAt);
  if (typeof identityId !== 'string' || !(await identityExists(ctx.db, identityId)))
    throw fieldError('identityId', 'no identity found with the given id', identityId);

  if (method === 'updb') {
    out.username = await checkUpdbUsername(ctx, out.username);
    out.caId = null;
  } else if (method === 'ottca') {
    if (typeof out.caId !== 'string' || out.caId === '')
      throw fieldError('caId', 'caId is required for ottca', out.caId ?? null);
    // The CA must exist now; whether it is verified and allows ottca is judged when the token is used (§7.3).
    if (!(await caExists(ctx.db, out.caId))) throw fieldError('caId', 'no CA found with the given id', out.caId);
    out.username = null;
  } else {
    out.caId = null;
    out.username = null;
  }

  if ((await enrollmentIdOf(ctx.db, identityId, method)) !== undefined) {
    throw new DomainError('ENROLLMENT_EXISTS', {
      cause: { field: 'method', reason: 'enrollment of same method exists', value: method },
    });
  }
  const authMethod = authenticatorMethodFor(method);
  if ((await authenticatorIdOf(ctx.db, identityId, authMethod)) !== undefined) {
    throw new DomainError('MAX_AUTHENTICATOR_METHODS_REACHED', {
      cause: { field: 'method', reason: `identity already has a ${authMethod} authenticator`, value: method },
    });
  }

  out.expiresAt = iso(expiresAt);
  // The token derives from the id, so the id is chosen here (createEntity keeps it).
  out.id = newId();
  Object.assign(out, await enrollmentSecrets(ctx, { id: out.id as string, method, subject: identityId, expiresAt }));
  return out;
}

const EDGE_ROUTER_REF: RefSpec = {
  idField: 'edgeRouterId',
  as: 'edgeRouter',
  table: 'edge_routers',
  collection: 'edge-routers',
};
const TRANSIT_ROUTER_REF: RefSpec = {
  idField: 'transitRouterId',
  as: 'transitRouter',
  table: 'transit_routers',
  collection: 'transit-routers',
};

async function decorate(ctx: Ctx, rows: Row[]): Promise<void> {
  await attachRefs(ctx, rows, IDENTITY_REF, EDGE_ROUTER_REF, TRANSIT_ROUTER_REF);
  for (const r of rows) Object.assign(r, enrollmentCredentials(ctx, r));
}

export const enrollments: ResourceDef = {
  name: 'enrollments',
  label: 'enrollment',
  table: 'enrollments',
  schemaName: 'enrollment',
  props: {
    method: {
      schema: Type.Union(IDENTITY_ENROLLMENT_METHODS.map((m) => Type.Literal(m))),
      storage: 'text',
      create: 'required',
      filter: true,
    },
    identityId: { schema: Type.String(), storage: 'text', create: 'required', filter: true },
    expiresAt: { schema: Type.String(), storage: 'datetime', create: 'required', filter: true },
    caId: {
      schema: Type.String(),
      storage: 'text',
      create: 'optional',
      nullable: true,
      renderNull: true,
      filter: true,
    },
    username: { schema: Type.String(), storage: 'text', create: 'optional', nullable: true, filter: true },
    // Stored instead of `token` and `jwt`, which are derived when rendered (model/tokens.ts).
    tokenHash: { schema: Type.String(), storage: 'text', hidden: true },
    jwtTemplate: { schema: Type.String(), storage: 'text', hidden: true },
    // Router enrollments (erott, trott) are created with their router (services/router-enrollment.ts).
    edgeRouterId: { schema: Type.String(), storage: 'text', filter: true },
    transitRouterId: { schema: Type.String(), storage: 'text', filter: true },
  },
  extraFields: {
    token: { kind: 'scalar', type: 'string', column: 'tokenHash', hashed: true },
    identity: { kind: 'scalar', type: 'string', column: 'identityId' },
    ca: { kind: 'scalar', type: 'string', column: 'caId' },
    edgeRouter: { kind: 'scalar', type: 'string', column: 'edgeRouterId' },
    transitRouter: { kind: 'scalar', type: 'string', column: 'transitRouterId' },
  },
  hooks: { prepare, decorate },
  ops: { list: 'listEnrollments', create: 'createEnrollment', detail: 'detailEnrollment', delete: 'deleteEnrollment' },
  envelopes: { list: 'listEnrollmentsEnvelope', detail: 'detailEnrollmentEnvelope' },
};

/** The `enrollment` member of identity records: `{ott?, ottca?, updb?: {id, token, jwt, expiresAt}}` per identity. */
export async function enrollmentSummaries(
  ctx: Ctx,
  identityIds: string[],
): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  if (identityIds.length === 0) return out;
  const rows = await enrollmentsOfIdentities(ctx.db, identityIds);
  const summaries = rows.map((r) => {
    const { token, jwt } = enrollmentCredentials(ctx, r);
    return {
      id: r.id,
      token,
      jwt,
      expiresAt: r.expiresAt,
      ...(r.method === 'ottca' && r.caId ? { caId: r.caId } : {}),
    };
  });
  // ottca entries also carry the CA as an entity reference (docs/reference-notes.md §12 identityEnrollments.ottca).
  await attachRefs(ctx, summaries, { idField: 'caId', as: 'ca', table: 'cas', collection: 'cas' });
  for (const [i, r] of rows.entries()) {
    const summary = summaries[i]!;
    const identityId = r.identityId!;
    const forIdentity = out.get(identityId) ?? {};
    forIdentity[r.method] = summary;
    out.set(identityId, forIdentity);
  }
  return out;
}

/** What identity create accepts under `enrollment` (docs/reference-notes.md §12 `identityCreate.enrollment`). */
export interface IdentityEnrollmentRequest {
  ott?: boolean;
  ottca?: string;
  updb?: string;
}

/**
 * Creates the enrollments an identity create asked for, expiring after the configured identity enrollment
 * duration (parity: §7.2). Runs inside the identity's transaction, so a refused enrollment refuses the identity.
 * Field errors are renamed to `enrollment.<method>` so they point at what the caller sent.
 */
export async function createRequestedEnrollments(
  ctx: Ctx,
  identityId: string,
  request: IdentityEnrollmentRequest | null | undefined,
): Promise<void> {
  if (!request) return;
  if (request.ott === true && typeof request.ottca === 'string') {
    throw fieldError(
      'enrollment',
      'ott and ottca are exclusive: both would create a certificate authenticator',
      request,
    );
  }
  const expiresAt = iso(new Date(ctx.now().getTime() + ctx.settings.identityEnrollmentDurationMs));
  const wanted: Input[] = [];
  if (request.ott === true) wanted.push({ method: 'ott' });
  if (typeof request.ottca === 'string') wanted.push({ method: 'ottca', caId: request.ottca });
  if (typeof request.updb === 'string') wanted.push({ method: 'updb', username: request.updb });
  for (const body of wanted) {
    try {
      await createEntity(ctx, enrollments, { ...body, identityId, expiresAt });
    } catch (e) {
      const cause = isDomainError(e) ? (e.errorCause as FieldCause | undefined) : undefined;
      if (isDomainError(e) && e.code === 'COULD_NOT_VALIDATE' && cause?.field) {
        throw fieldError(`enrollment.${String(body.method)}`, cause.reason, cause.value);
      }
      throw e;
    }
  }
}
