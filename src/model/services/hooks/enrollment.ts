/**
 * Enrollments (parity: docs/reference-notes.md §7.1, §7.2): a create checks what every method shares (the
 * identity, a future `expiresAt`, one enrollment per method, no authenticator of that kind yet) and hands the
 * method's own fields to its module (src/model/enrollments); reads complete the token and JWT.
 */
import { authenticatorIdOf } from '../../../store/authenticators.js';
import { enrollmentIdOf, enrollmentsOfIdentities } from '../../../store/enrollments.js';
import { identityExists } from '../../../store/identities.js';
import { createEntity } from '../../crud.js';
import { iso, type Ctx } from '../../ctx.js';
import { DomainError, fieldError, isDomainError, type FieldCause } from '../../errors.js';
import { newEntityId } from '../../ids.js';
import { enrollmentCredentials, enrollmentSecrets, futureDate } from '../../enrollments/credentials.js';
import { enrollmentMethod } from '../../enrollments/index.js';
import { attachRefs, IDENTITY_REF, type RefSpec } from '../../refs.js';
import type { Input, ResourceHooks, Row, WriteMode } from '../../resource.js';
import { enrollments } from '../../resources/enrollment.js';

async function prepare(ctx: Ctx, input: Input, mode: WriteMode): Promise<Input> {
  // Enrollments are never updated through the API; refresh sets expiresAt and jwt directly.
  if (mode !== 'create') return input;
  const out = { ...input };
  const identityId = out.identityId;
  const expiresAt = futureDate(ctx, 'expiresAt', out.expiresAt);
  if (typeof identityId !== 'string' || !(await identityExists(ctx.db, identityId)))
    throw fieldError('identityId', 'no identity found with the given id', identityId);
  const method = enrollmentMethod(out.method);
  if (!method) throw fieldError('method', 'method must be one of ott, ottca, updb', out.method);
  await method.prepareCreate(ctx, out);

  if ((await enrollmentIdOf(ctx.db, identityId, method.id)) !== undefined) {
    throw new DomainError('ENROLLMENT_EXISTS', {
      cause: { field: 'method', reason: 'enrollment of same method exists', value: method.id },
    });
  }
  if ((await authenticatorIdOf(ctx.db, identityId, method.authenticator)) !== undefined) {
    throw new DomainError('MAX_AUTHENTICATOR_METHODS_REACHED', {
      cause: {
        field: 'method',
        reason: `identity already has a ${method.authenticator} authenticator`,
        value: method.id,
      },
    });
  }

  out.expiresAt = iso(expiresAt);
  // The token derives from the id, so the id is chosen here (createEntity keeps it).
  const id = newEntityId();
  out.id = id;
  Object.assign(out, await enrollmentSecrets(ctx, { id, method: method.id, subject: identityId, expiresAt }));
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

export const enrollmentHooks: ResourceHooks = { prepare, decorate };

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
