/**
 * Identities (docs/reference-notes.md §12 "Identity", §5.6, §10.4): the type and auth policy checked, the default
 * admin and a tunneler router's identity protected, enrollments created with the identity, and the computed
 * and joined fields of the records.
 */
import { apiSessionIdsOfIdentity, identitiesWithApiSession } from '../../../store/api-sessions.js';
import { authPolicyExists, authPolicyNames } from '../../../store/auth-policies.js';
import { authenticatorsOfIdentities } from '../../../store/authenticators.js';
import { identitiesWithVerifiedMfa } from '../../../store/mfas.js';
import { edgeRouterExists } from '../../../store/routers.js';
import type { Ctx } from '../../ctx.js';
import { DomainError, fieldError } from '../../errors.js';
import { entityRef } from '../../render.js';
import type { Input } from '../../resource.js';
import type { Decorated, RecordOf } from '../../resource-record.js';
import { hooksFor } from '../../resource-hooks.js';
import { identities, isDisabled } from '../../resources/identity.js';
import { checkRoleAttributes } from '../../schemas.js';
import { removeIdReferences } from '../../policy/matches.js';
import { tracingOf } from '../identity/identity-trace.js';
import { createRequestedEnrollments, enrollmentSummaries, type IdentityEnrollmentRequest } from './enrollment.js';
import { recordSessionsEnding } from '../../events/session-events.js';
import { recordApiSessionsEnding } from '../api-session/api-session.js';

type Identity = RecordOf<typeof identities>;

/** A tunneler router's identity goes with its router, not on its own (parity: §2.7). */
async function refuseWhileRouterExists(ctx: Ctx, { id }: Identity): Promise<void> {
  // A tunneler router's identity has the router's id.
  if (!(await edgeRouterExists(ctx.db, id))) return;
  throw new DomainError('CAN_NOT_DELETE_REFERENCED_ENTITY', {
    urlVars: { id },
    cause: { field: 'id', reason: `entity type identities referenced by edge-routers: [${id}]`, value: id },
    causeMessage: `referenced by /edge-routers/${id}`,
  });
}

async function prepare(
  ctx: Ctx,
  input: Input,
  mode: 'create' | 'update' | 'patch',
  existing?: Identity,
): Promise<Input> {
  // Rest, not a spread copy and `delete` (slow on a wide record: copyOf in row.ts).
  const { type, ...out } = input;
  if (type !== undefined) out.typeId = type;
  if ('authPolicyId' in out) {
    if (out.authPolicyId === null || out.authPolicyId === undefined) out.authPolicyId = 'default';
    // `default` is the system's own policy, which no request can remove (and the column's foreign key refuses a
    // policy that is gone): not looked up, a statement less on every create that leaves the policy unset.
    if (
      typeof out.authPolicyId !== 'string' ||
      (out.authPolicyId !== 'default' && !(await authPolicyExists(ctx.db, out.authPolicyId)))
    )
      throw fieldError('authPolicyId', 'no auth policy found with the given id', out.authPolicyId);
  }
  if (out.roleAttributes !== undefined) checkRoleAttributes('roleAttributes', out.roleAttributes);
  if (out.externalId === '') out.externalId = null;
  if (existing?.isDefaultAdmin && out.isAdmin === false) {
    throw fieldError('isAdmin', 'the default admin must remain an admin', false);
  }
  if (mode !== 'create') delete out.enrollment;
  // A tunneler router's identity keeps the router's name and the Router type; the router manages them.
  if (existing && (await edgeRouterExists(ctx.db, existing.id))) {
    const renamed = out.name !== undefined && out.name !== existing.name;
    const retyped = out.typeId !== undefined && out.typeId !== existing.typeId;
    if (renamed || retyped)
      throw new DomainError('ENTITY_CAN_NOT_BE_UPDATED', {
        urlVars: { id: existing.id },
        cause: {
          field: renamed ? 'name' : 'type',
          reason: 'the identity of an edge router follows its router',
          value: renamed ? out.name : out.typeId,
        },
      });
  }
  return out;
}

/** Adds the computed and joined fields of identity records for one page at once. */
async function decorate(ctx: Ctx, rows: Decorated<typeof identities>[]): Promise<void> {
  if (rows.length === 0) return;
  const ids = rows.map((r) => r.id);
  const now = ctx.now();
  const [authenticators, policies, withSession, enrollments, withMfa] = await Promise.all([
    authenticatorsOfIdentities(ctx.db, ids),
    authPolicyNames(ctx.db),
    identitiesWithApiSession(ctx.db, ids),
    enrollmentSummaries(ctx, ids),
    identitiesWithVerifiedMfa(ctx.db, ids),
  ]);
  const policyNames = new Map(policies.map((p) => [p.id, p.name]));
  const tracing = await tracingOf(ctx, ids);
  for (const r of rows) {
    const { id } = r;
    const auths: Record<string, unknown> = {};
    for (const a of authenticators.filter((x) => x.identityId === id)) {
      if (a.method === 'updb') auths.updb = { id: a.id, username: a.username };
      else if (a.method === 'cert') auths.cert = { id: a.id, fingerprint: a.fingerprint };
    }
    r.type = entityRef('identity-types', r.typeId, r.typeId);
    const { authPolicyId } = r;
    r.authPolicy = entityRef('auth-policies', authPolicyId, policyNames.get(authPolicyId));
    r.authenticators = auths;
    r.enrollment = enrollments.get(id) ?? {};
    r.disabled = isDisabled(r, now);
    r.disabledAt = r.disabledAt ?? null;
    r.disabledUntil = r.disabledUntil ?? null;
    r.hasApiSession = withSession.has(id);
    r.hasEdgeRouterConnection = false;
    r.edgeRouterConnectionStatus = 'offline';
    // A verified TOTP enrollment (services/mfa/mfa.ts).
    r.isMfaEnabled = withMfa.has(id);
    r.tracing = tracing.get(id);
    // Fine-grained admin permissions (the current spec) are not granted here: `isAdmin` is all there is.
    r.permissions ??= [];
  }
}

/** The earliest time a page's records change with the clock alone: a lock that ends, a trace that stops. */
function pagesValidUntil(rows: Decorated<typeof identities>[], now: Date): number {
  let until = Infinity;
  const later = (at: unknown) => {
    const t = typeof at === 'string' ? new Date(at).getTime() : NaN;
    if (t > now.getTime() && t < until) until = t;
  };
  for (const r of rows) {
    if (r.disabledAt) later(r.disabledUntil);
    later((r.tracing as { until?: string } | undefined)?.until);
  }
  return until;
}

export const identityHooks = hooksFor(identities, {
  prepare,
  decorate,
  pagesValidUntil,
  // `enrollment: {ott | ottca | updb}` on create makes the enrollments in the identity's transaction (§7.2).
  async afterWrite(ctx, id, mode, input) {
    if (mode === 'create')
      await createRequestedEnrollments(ctx, id, input.enrollment as IdentityEnrollmentRequest | undefined);
  },
  // The enrollments are rows of their own: the identity's row stays as inserted.
  afterWriteKeepsRow: true,
  // Its API sessions, its posture and its failed service requests go with it by cascade.
  async beforeDelete(ctx, row) {
    if (row.isDefaultAdmin) throw new DomainError('ENTITY_CAN_NOT_BE_DELETED', { urlVars: { id: row.id } });
    await refuseWhileRouterExists(ctx, row);
    await removeIdReferences(ctx, 'identity', row.id);
    // The events of its sessions and API sessions, while they can be read (each session once, as the identity's).
    await recordSessionsEnding(ctx, 'identityId', [row.id], 'identity-deleted');
    await recordApiSessionsEnding(ctx, await apiSessionIdsOfIdentity(ctx.db, row.id), 'deleted', { sessions: false });
  },
});
