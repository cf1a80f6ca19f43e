/**
 * Creating, reading and removing sessions (docs/reference-notes.md §4.5).
 *
 * Create checks, in the reference's order: the identity may not Dial or Bind the service (404), may not use
 * the requested type (400, cause field `ServiceId`), posture (`access/posture.ts`), no edge router
 * shared by the identity's and the service's router policies (400 NO_EDGE_ROUTERS_AVAILABLE). Only then is
 * an existing session of the same API session, service and type returned instead of a new one, so a repeat
 * re-checks access. Access and routers come from the access engine (memory, kept current by the store's
 * markers), so the checks cost no policy queries.
 */
import { sessionsOfIdentity } from '../../../store/scopes.js';
import { deleteSessionById, insertSessionIfAbsent, sessionOf, type StoredSession } from '../../../store/sessions.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { withTx } from '../../../store/db.js';
import { recordSessionsEnding, sessionCreatedEvent } from '../../events/session-events.js';
import { getEntity, listEntities, type Page } from '../../crud.js';
import { DomainError, notFound } from '../../errors.js';
import { newEntityId } from '../../ids.js';
import { tokenHash } from '../../tokens.js';
import type { ListOptions } from '../../list-query.js';
import { renderRecord } from '../../render.js';
import { JsonText } from '../../json-text.js';
import type { Row } from '../../resource.js';
import { textOf, textOr } from '../../row.js';
import { accessEngine } from '../../access/engine.js';
import { checkSessionPosture, passingPolicies } from '../../access/posture.js';
import { postureModelNow } from '../../posture/evaluate.js';
import { BIND, DIAL, grantingPolicies } from '../../access/queries.js';
import { sessions } from '../../resources/session.js';
import { decorateSession } from '../hooks/session.js';
import { sessionEdgeRouters, sessionEdgeRoutersNow } from './session-routers.js';
import { sessionAnswers } from './session-answers.js';

export type SessionType = 'Dial' | 'Bind';

export interface SessionCaller {
  identityId: string;
  apiSessionId: string;
}

export interface SessionCreate {
  serviceId?: string;
  type?: SessionType;
  tags?: Record<string, unknown> | null;
}

/** The session of an API session for a service and type (the unique index), if any. It runs on every create. */
const findSession = (
  ctx: Ctx,
  apiSessionId: string,
  serviceId: string,
  type: SessionType,
): Promise<StoredSession | undefined> => sessionOf(ctx.db, apiSessionId, serviceId, type);

/**
 * `POST /sessions`: the session record (new or the existing one of this API session, service and type),
 * encoded: a repeat answers the text made the first time when nothing in it changed.
 */
export async function createSession(ctx: Ctx, caller: SessionCaller, body: SessionCreate): Promise<JsonText> {
  const type: SessionType = body.type ?? 'Dial';
  const serviceId = body.serviceId ?? '';
  const engine = accessEngine(ctx);
  // Warm, every entry is read as it is; only what is being (re)computed is awaited.
  const m = engine.markersNow(ctx) ?? (await engine.markers(ctx));
  const view = engine.viewNow(ctx, caller.identityId, m) ?? (await engine.view(ctx, caller.identityId, m));
  const bits = view.grants.perms.get(serviceId);
  if (!bits) throw notFound(serviceId, 'service');
  if (!(bits & (type === 'Dial' ? DIAL : BIND))) {
    throw new DomainError('COULD_NOT_VALIDATE', {
      cause: { field: 'ServiceId', reason: 'service not found', value: serviceId },
      causeMessage: 'ServiceId: service not found',
    });
  }
  const serviceName = textOr(view.catalog.records.get(serviceId)?.name, '');
  // Without posture checks in the store (the model loaded and empty) there is nothing to check.
  if (postureModelNow(ctx, m.serviceAccess.gen)?.size !== 0)
    await checkSessionPosture(ctx, {
      identityId: caller.identityId,
      apiSessionId: caller.apiSessionId,
      serviceId,
      serviceName,
      type,
      identityPolicyIds: view.identity.servicePolicyIds,
      serviceAccessGen: m.serviceAccess.gen,
      policies: () => grantingPolicies(ctx.db, view.identity.servicePolicyIds, serviceId, type),
    });
  const edgeRouters =
    sessionEdgeRoutersNow(ctx, m, view.identity, serviceId) ??
    (await sessionEdgeRouters(ctx, m, view.identity, serviceId));
  // parity: only the policy linkage is checked, not whether the routers are online (§4.5 step 4).
  if (edgeRouters.length === 0) throw new DomainError('NO_EDGE_ROUTERS_AVAILABLE');

  const key = `${caller.apiSessionId} ${serviceId} ${type}`;
  const version = String(m.sessions.gen);
  const answers = sessionAnswers(ctx.db);
  // A session this controller made or read lately is known; otherwise the insert comes first and only a
  // conflict (the session exists: made before, or elsewhere) reads it, so a new session costs one statement.
  let row = engine.sessions.now(key, version)?.v ?? (await engine.sessions.peek(key, version));
  let token: string | undefined;
  if (!row) {
    const at = ctx.now();
    const now = iso(at);
    const id = newEntityId();
    token = ctx.tokens.token('session', id);
    const values: StoredSession = {
      id,
      createdAt: now,
      updatedAt: now,
      tags: body.tags ?? {},
      isSystem: false,
      // Derived from the id (model/tokens.ts); only the hash is stored.
      tokenHash: tokenHash(token),
      type,
      apiSessionId: caller.apiSessionId,
      serviceId,
      identityId: caller.identityId,
    };
    // A concurrent create of the same (API session, service, type) may win the unique index: then use its row
    // (and no event is stored: the insert and its event go together).
    if (await insertSessionIfAbsent(ctx.db, values, sessionCreatedEvent(ctx, values, at))) row = values;
    else {
      row = await findSession(ctx, caller.apiSessionId, serviceId, type);
      token = undefined;
    }
    // The API session may have ended meanwhile (its sessions go with it): then there is nothing to answer.
    if (!row) throw new DomainError('UNAUTHORIZED');
    engine.sessions.set(key, version, row);
  } else {
    // A repeat: the answer made last time, if nothing it was made of changed (session-answers.ts).
    const cached = answers?.get(key, row, serviceName, edgeRouters);
    if (cached) return cached;
  }
  const out: Row = { ...row, token: token ?? ctx.tokens.token('session', row.id) };
  decorateSession(out, serviceName, edgeRouters);
  const json = new JsonText(JSON.stringify(renderRecord(sessions, out)));
  // Kept for repeats only from the first repeat on: most sessions are asked for once.
  if (!token) answers?.set(key, { row, serviceName, edgeRouters, json });
  return json;
}

/** Sessions of one identity (client) or of everyone (management, `identityId` undefined). */
export async function listSessions(
  ctx: Ctx,
  opts: ListOptions,
  identityId?: string,
): Promise<{ records: Record<string, unknown>[]; page: Page }> {
  const page = await listEntities(
    ctx,
    sessions,
    opts,
    identityId === undefined ? undefined : sessionsOfIdentity(identityId),
  );
  return { records: page.rows.map((r) => renderRecord(sessions, r)), page };
}

/** One session; 404 when it does not exist or (client) belongs to another identity. */
export async function getSession(ctx: Ctx, id: string, identityId?: string): Promise<Row> {
  const row = await getEntity(ctx, sessions, id);
  if (identityId !== undefined && row.identityId !== identityId) throw notFound(id, 'session');
  return row;
}

export async function sessionDetail(ctx: Ctx, id: string, identityId?: string): Promise<Record<string, unknown>> {
  return renderRecord(sessions, await getSession(ctx, id, identityId));
}

/**
 * Management detail: adds `servicePolicies`, the policies of the session's type that grant the identity the
 * service and pass posture (docs/reference-notes.md §4.5).
 */
export async function sessionManagementDetail(ctx: Ctx, id: string): Promise<Record<string, unknown>> {
  const row = await getSession(ctx, id);
  const engine = accessEngine(ctx);
  const identity = await engine.identity(ctx, await engine.markers(ctx), textOf(row, 'identityId'));
  const policies = await grantingPolicies(
    ctx.db,
    identity.servicePolicyIds,
    textOf(row, 'serviceId'),
    row.type as SessionType,
  );
  const passing = await passingPolicies(
    ctx,
    await engine.markers(ctx),
    policies,
    textOf(row, 'identityId'),
    textOf(row, 'apiSessionId'),
  );
  const out = renderRecord(sessions, row);
  out.servicePolicies = passing.map((p) => ({
    _links: { self: { href: `./service-policies/${p.id}` } },
    entity: 'service-policies',
    id: p.id,
    name: p.name,
  }));
  return out;
}

export async function deleteSession(ctx: Ctx, id: string, identityId?: string): Promise<void> {
  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const row = await getSession(tctx, id, identityId);
    await recordSessionsEnding(tctx, 'id', [textOf(row, 'id')], 'deleted');
    await deleteSessionById(trx, textOf(row, 'id'));
  });
}
