/**
 * An identity's own configs for services (`/identities/{id}/service-configs`): for a service and a config
 * type, the identity's config replaces the service's in the identity's view (docs/reference-notes.md §4.7).
 * At most one per (identity, service, config type): assigning another config of the same type replaces it.
 */
import { withTx } from '../../../store/db.js';
import {
  configTypeOfConfig,
  deleteIdentityServiceConfigs,
  identityServiceConfigs,
  putIdentityServiceConfig,
  serviceExists,
} from '../../../store/service-configs.js';
import type { Ctx } from '../../ctx.js';
import { withDb } from '../../ctx.js';
import { getRow } from '../../crud.js';
import { fieldError } from '../../errors.js';
import { entityRef } from '../../render.js';
import { identities } from '../../resources/identity.js';
import { recordOtherOperation } from '../../events/operation-events.js';

export interface ServiceConfigPair {
  serviceId?: string;
  configId?: string;
}

/** `serviceConfigDetail` records of an identity, by service then config. */
export async function listIdentityServiceConfigs(ctx: Ctx, identityId: string): Promise<Record<string, unknown>[]> {
  await getRow(ctx, identities, identityId);
  const rows = await identityServiceConfigs(ctx.db, identityId);
  return rows.map((r) => ({
    serviceId: r.serviceId,
    service: entityRef('services', r.serviceId, r.serviceName),
    configId: r.configId,
    config: entityRef('configs', r.configId, r.configName),
  }));
}

/** Assigns configs (each pair needs an existing service and config); all or nothing. */
export async function assignIdentityServiceConfigs(
  ctx: Ctx,
  identityId: string,
  pairs: ServiceConfigPair[],
): Promise<void> {
  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    await getRow(tctx, identities, identityId);
    const before = await serviceConfigsState(tctx, identityId);
    for (const p of pairs) {
      if (!p.serviceId) throw fieldError('serviceId', 'serviceId is required', p.serviceId);
      if (!p.configId) throw fieldError('configId', 'configId is required', p.configId);
      if (!(await serviceExists(trx, p.serviceId)))
        throw fieldError('serviceId', 'no service found with the given id', p.serviceId);
      const configTypeId = await configTypeOfConfig(trx, p.configId);
      if (configTypeId === undefined) throw fieldError('configId', 'no config found with the given id', p.configId);
      await putIdentityServiceConfig(trx, { identityId, serviceId: p.serviceId, configTypeId, configId: p.configId });
    }
    await recordServiceConfigsChange(tctx, identityId, before);
  });
}

/**
 * Removes assignments: the listed (service, config) pairs, every config of a service when a pair names no
 * config, and everything when no pair is given.
 */
export async function removeIdentityServiceConfigs(
  ctx: Ctx,
  identityId: string,
  pairs: ServiceConfigPair[] | undefined,
): Promise<void> {
  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    await getRow(tctx, identities, identityId);
    const before = await serviceConfigsState(tctx, identityId);
    if (!pairs || pairs.length === 0) {
      await deleteIdentityServiceConfigs(trx, identityId);
      await recordServiceConfigsChange(tctx, identityId, before);
      return;
    }
    for (const p of pairs) {
      if (!p.serviceId) throw fieldError('serviceId', 'serviceId is required', p.serviceId);
      await deleteIdentityServiceConfigs(trx, identityId, {
        serviceId: p.serviceId,
        configId: p.configId || undefined,
      });
    }
    await recordServiceConfigsChange(tctx, identityId, before);
  });
}

/** An identity's service-config assignments as its events show them. */
async function serviceConfigsState(ctx: Ctx, identityId: string): Promise<Record<string, unknown>> {
  const rows = await identityServiceConfigs(ctx.db, identityId);
  return { serviceConfigs: rows.map((r) => ({ serviceId: r.serviceId, configId: r.configId })) };
}

/** The identity's entityChange for its service configs, when they changed. */
async function recordServiceConfigsChange(
  ctx: Ctx,
  identityId: string,
  before: Record<string, unknown>,
): Promise<void> {
  const after = await serviceConfigsState(ctx, identityId);
  if (JSON.stringify(after) === JSON.stringify(before)) return;
  await recordOtherOperation(ctx, 'identities', identityId, 'updated', 'identity-service-configs', before, after);
}
