/**
 * Client posture responses (docs/reference-notes.md §9.2): each item names a posture check (`id`) and a
 * `typeId`, plus the data of that type; the data is kept in the store (state.ts). The reply lists the services
 * whose MFA checks now run against a wake/unlock grace. Sessions whose posture no longer passes are removed.
 */
import { Type, type TSchema } from '../schema-type.js';
import { deleteSessionsByIds, sessionsOfIdentityForPosture } from '../../store/posture.js';
import { withTx } from '../../store/db.js';
import { recordSessionsEnding } from '../events/session-events.js';
import {
  holdPostureOwner,
  identityPostureRow,
  putIdentityPosture,
  putSessionPosture,
  sessionPostureRow,
} from '../../store/posture-state.js';
import { accessEngine } from '../access/engine.js';
import { grantingPolicies } from '../access/queries.js';
import { withDb, type Ctx } from '../ctx.js';
import { fieldError, type DomainError, type FieldCause } from '../errors.js';
import { validateAgainst } from '../json-schema.js';
import { checkedPoliciesFor, evaluatePolicy, postureModel, postureView, type PostureModel } from './evaluate.js';
import { allowedSlots, applicableChecks, slotFor, withResponses, type KeptResponse } from './kept.js';
import {
  identityFromStore,
  sessionFromStore,
  sessionToStore,
  storedRecords,
  type ApiSessionPosture,
  type IdentityPosture,
  type Reported,
} from './state.js';
import type { PostureView } from './types/type.js';
import { clearMfaPassed } from './posture-of.js';
import { mfaType } from './types/mfa.js';
import { textList, textOf, textOr } from '../row.js';

const Str = Type.String({ maxLength: 4096 });
const Strings = Type.Array(Str, { maxItems: 1000 });

interface ResponseKind {
  schema: TSchema;
  /** Check types a response of the kind answers: kept per identity in that check's slot (kept.ts). */
  answers?: readonly string[];
  record?(item: Record<string, unknown>, now: Date): Reported;
  /** Kept per API session instead, whatever its id (the reference's clients send `"0"`). */
  session?(item: Record<string, unknown>, session: ApiSessionPosture, now: Date): void;
}

const reported = (r: Record<string, unknown>, now: Date): Reported => ({
  postureCheckId: textOf(r, 'id'),
  lastUpdatedAt: now,
});

/** One entry per response `typeId`: the data it carries and where it is kept. */
const RESPONSE_KINDS: Record<string, ResponseKind> = {
  OS: {
    schema: Type.Object({ type: Str, version: Str, build: Type.Optional(Str) }),
    answers: ['OS'],
    record: (r, now) => ({
      ...reported(r, now),
      type: textOf(r, 'type'),
      version: textOf(r, 'version'),
      build: textOr(r.build, ''),
    }),
  },
  DOMAIN: {
    schema: Type.Object({ domain: Str }),
    answers: ['DOMAIN'],
    record: (r, now) => ({ ...reported(r, now), domain: textOf(r, 'domain') }),
  },
  MAC: {
    schema: Type.Object({ macAddresses: Strings }),
    answers: ['MAC'],
    record: (r, now) => ({ ...reported(r, now), addresses: textList(r.macAddresses) ?? [] }),
  },
  // PROCESS_MULTI checks are answered with PROCESS responses, one per process (the reference's clients do so).
  PROCESS: {
    schema: Type.Object({
      path: Str,
      isRunning: Type.Boolean(),
      hash: Type.Optional(Str),
      signerFingerprints: Type.Optional(Strings),
    }),
    answers: ['PROCESS', 'PROCESS_MULTI'],
    record: (r, now) => ({
      ...reported(r, now),
      path: textOf(r, 'path'),
      isRunning: r.isRunning === true,
      ...(typeof r.hash === 'string' && { hash: r.hash }),
      signerFingerprints: textList(r.signerFingerprints) ?? [],
    }),
  },
  ENDPOINT_STATE: {
    schema: Type.Object({ woken: Type.Optional(Type.Boolean()), unlocked: Type.Optional(Type.Boolean()) }),
    session: (r, s, now) => {
      if (r.woken === true) s.wokenAt = now;
      if (r.unlocked === true) s.unlockedAt = now;
    },
  },
};
RESPONSE_KINDS.PROCESS_MULTI = RESPONSE_KINDS.PROCESS!;

export const RESPONSE_TYPE_IDS = Object.keys(RESPONSE_KINDS);

/** The kind a response's `typeId` names; only the table's own keys count (not `toString` and the like). */
const kindOf = (typeId: unknown): ResponseKind | undefined =>
  typeof typeId === 'string' && Object.hasOwn(RESPONSE_KINDS, typeId) ? RESPONSE_KINDS[typeId] : undefined;

/** How an item's fields are named in errors: `[2].path` in a bulk request, `path` alone. */
const prefixOf = (items: readonly unknown[], i: number) => (items.length > 1 ? `[${i}].` : '');

export interface PostureCaller {
  identityId: string;
  apiSessionId: string;
}

export interface MfaTimeoutService {
  id: string;
  name: string;
  postureQueryType: string;
  timeout: number;
  timeoutRemaining: number;
}

function validateItems(items: Record<string, unknown>[]): void {
  items.forEach((item, i) => {
    const prefix = prefixOf(items, i);
    if (typeof item.id !== 'string' || item.id === '') throw fieldError(`${prefix}id`, 'id is required', item.id);
    const kind = kindOf(item.typeId);
    if (!kind) throw fieldError(`${prefix}typeId`, `must be one of ${RESPONSE_TYPE_IDS.join(', ')}`, item.typeId);
    try {
      validateAgainst(kind.schema as unknown as Record<string, unknown>, item, '_');
    } catch (e) {
      // Name the item's own field (`version`, `[2].path` in a bulk request), not a made-up root.
      const cause = (e as DomainError).errorCause as FieldCause | undefined;
      if (cause?.field) cause.field = prefix + cause.field.replace(/^_\.?/, '');
      throw e;
    }
  });
}

/**
 * Validates every item first (a bad one changes nothing), then keeps those answering a check that applies to
 * the caller (kept.ts; the rest are ignored) and answers the MFA services. What is kept is written to the
 * store in one transaction, read and written there so that reports reaching several controllers at once for
 * one identity each build on the other's.
 */
export async function submitPostureResponses(
  ctx: Ctx,
  caller: PostureCaller,
  items: Record<string, unknown>[],
): Promise<{ services: MfaTimeoutService[] }> {
  validateItems(items);
  const policies = await callerPolicies(ctx, caller.identityId);
  const checks = applicableChecks(policies.model, policies.policyIds);
  const now = ctx.now();
  const kept: KeptResponse[] = [];
  items.forEach((item, i) => {
    const kind = kindOf(item.typeId)!;
    const slot = kind.answers && slotFor(checks, item, kind.answers);
    if (slot) kept.push({ slot, record: kind.record!(item, now), prefix: prefixOf(items, i), id: textOf(item, 'id') });
  });
  const forSession = items.filter((i) => kindOf(i.typeId)!.session);
  await withTx(ctx.db, async (trx) => {
    // An identity deleted while this request waited keeps nothing.
    if (!(await holdPostureOwner(trx, 'identities', caller.identityId))) return;
    const stored = await identityPostureRow(trx, caller.identityId);
    const current: IdentityPosture = stored ? identityFromStore(stored) : { processes: new Map() };
    // Built aside: a response over the bound throws before anything was written (and the transaction is undone).
    const next: IdentityPosture = withResponses(current, allowedSlots(checks), kept);
    const storedSession = await sessionPostureRow(trx, caller.apiSessionId);
    const session: ApiSessionPosture | undefined = storedSession && sessionFromStore(storedSession);
    let nextSession = session;
    // The API session may have ended while this request waited (its posture went with it): nothing comes back.
    if (forSession.length > 0 && (await holdPostureOwner(trx, 'api_sessions', caller.apiSessionId))) {
      nextSession = { ...session };
      for (const item of forSession) kindOf(item.typeId)!.session!(item, nextSession, now);
      await putSessionPosture(trx, caller.identityId, sessionToStore(caller.apiSessionId, nextSession));
    }
    // `service-updates` moves only when what the identity may use changed (§4.6).
    const moved =
      passingState(policies, { identity: current, session, now }) !==
      passingState(policies, { identity: next, session: nextSession, now });
    next.changedAt = moved ? now : current.changedAt;
    const records = storedRecords(next);
    const changedAt = next.changedAt?.toISOString() ?? null;
    // Nothing to write when the records and the time are what is stored (an endpoint state alone).
    if (JSON.stringify(records) === JSON.stringify(stored?.records ?? {}) && changedAt === (stored?.changedAt ?? null))
      return;
    await putIdentityPosture(trx, caller.identityId, { records, changedAt });
  });

  const woken = items.some((i) => i.typeId === 'ENDPOINT_STATE' && i.woken === true);
  const unlocked = items.some((i) => i.typeId === 'ENDPOINT_STATE' && i.unlocked === true);
  const services = woken || unlocked ? await mfaPromptServices(ctx, caller, woken, unlocked) : [];
  await removeFailingSessions(ctx, caller.identityId);
  return { services };
}

interface CallerPolicies {
  model: PostureModel;
  /** The caller's service policies (left empty while no posture check exists). */
  policyIds: readonly string[];
}

async function callerPolicies(ctx: Ctx, identityId: string): Promise<CallerPolicies> {
  const engine = accessEngine(ctx);
  const m = await engine.markers(ctx);
  const model = await postureModel(ctx, m.serviceAccess.gen);
  if (model.size === 0) return { model, policyIds: [] };
  return { model, policyIds: (await engine.identity(ctx, m, identityId)).servicePolicyIds };
}

/** Which of the caller's policies carrying checks pass with the posture `view`, as one comparable string. */
function passingState({ model, policyIds }: CallerPolicies, view: PostureView): string {
  return policyIds
    .filter((id) => model.has(id))
    .map((id) => (evaluatePolicy(model.get(id)!, view).isPassing ? '1' : '0'))
    .join('');
}

/** Services of the caller under an MFA check that prompts on the reported wake/unlock, with their new timeouts. */
async function mfaPromptServices(
  ctx: Ctx,
  caller: PostureCaller,
  woken: boolean,
  unlocked: boolean,
): Promise<MfaTimeoutService[]> {
  const engine = accessEngine(ctx);
  const view = await engine.view(ctx, caller.identityId);
  const model = await postureModel(ctx, view.markers.serviceAccess.gen);
  if (model.size === 0) return [];
  const pv = await postureView(ctx, caller.identityId, caller.apiSessionId, ctx.now());
  const out: MfaTimeoutService[] = [];
  for (const serviceId of view.grants.ids) {
    for (const p of checkedPoliciesFor(model, view.identity.servicePolicyIds, serviceId)) {
      const mfa = p.checks.find(
        (c) => c.typeId === 'MFA' && ((woken && c.details.promptOnWake) || (unlocked && c.details.promptOnUnlock)),
      );
      if (!mfa) continue;
      out.push({
        id: serviceId,
        name: textOr(view.catalog.records.get(serviceId)?.name, ''),
        postureQueryType: 'MFA',
        ...mfaType.timeout!(mfa.details, pv),
      });
      break;
    }
  }
  return out;
}

/**
 * Removes the identity's sessions that no granting policy lets pass any more (after its posture changed).
 * Costs nothing while no posture check exists.
 */
export async function removeFailingSessions(ctx: Ctx, identityId: string): Promise<void> {
  const engine = accessEngine(ctx);
  const m = await engine.markers(ctx);
  const model = await postureModel(ctx, m.serviceAccess.gen);
  if (model.size === 0) return;
  const identity = await engine.identity(ctx, m, identityId);
  const failing: string[] = [];
  for (const s of await sessionsOfIdentityForPosture(ctx.db, identityId)) {
    const type = s.type as 'Dial' | 'Bind';
    const checked = checkedPoliciesFor(model, identity.servicePolicyIds, s.serviceId, type);
    if (checked.length === 0) continue;
    const pv = await postureView(ctx, identityId, s.apiSessionId, ctx.now());
    if (checked.some((p) => evaluatePolicy(p, pv).isPassing)) continue;
    const granting = await grantingPolicies(ctx.db, identity.servicePolicyIds, s.serviceId, type);
    if (granting.some((g) => !model.has(g.id))) continue;
    failing.push(s.id);
  }
  if (failing.length === 0) return;
  await withTx(ctx.db, async (trx) => {
    await recordSessionsEnding(withDb(ctx, trx), 'id', failing, 'posture');
    await deleteSessionsByIds(trx, failing);
  });
}

/**
 * MFA removed from the identity (an MFA event): no API session passes MFA, failing sessions go. The MFA
 * service clears the passes in the transaction that removes the enrollment (`clearMfaPassed`) instead.
 */
export async function mfaRemoved(ctx: Ctx, identityId: string): Promise<void> {
  await clearMfaPassed(ctx.db, identityId, ctx.now());
  await removeFailingSessions(ctx, identityId);
}
