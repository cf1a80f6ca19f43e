/**
 * An identity's own configs for services (`/identities/{id}/service-configs`): for a service and a config
 * type, the identity's config replaces the service's in the identity's view (docs/reference-notes.md §4.7).
 * At most one per (identity, service, config type): assigning another config of the same type replaces it.
 */
import { withTx } from '../../store/db.js';
import type { Ctx } from '../ctx.js';
import { withDb } from '../ctx.js';
import { getRow } from '../crud.js';
import { fieldError } from '../errors.js';
import { entityRef } from '../render.js';
import { identities } from '../resources/identity.js';

export interface ServiceConfigPair {
  serviceId?: string;
  configId?: string;
}

/** `serviceConfigDetail` records of an identity, by service then config. */
export async function listIdentityServiceConfigs(ctx: Ctx, identityId: string): Promise<Record<string, unknown>[]> {
  await getRow(ctx, identities, identityId);
  const rows = await ctx.db
    .selectFrom('identity_service_configs as x')
    .innerJoin('services as s', 's.id', 'x.serviceId')
    .innerJoin('configs as c', 'c.id', 'x.configId')
    .select(['x.serviceId as serviceId', 's.name as serviceName', 'x.configId as configId', 'c.name as configName'])
    .where('x.identityId', '=', identityId)
    .orderBy('x.serviceId')
    .orderBy('x.configId')
    .execute();
  return rows.map((r: { serviceId: string; serviceName: string; configId: string; configName: string }) => ({
    serviceId: r.serviceId,
    service: entityRef('services', r.serviceId, r.serviceName),
    configId: r.configId,
    config: entityRef('configs', r.configId, r.configName),
  }));
}

/** Assigns configs (each pair needs an existing service and config); all or nothing. */
export async function assignIdentityServiceConfigs(ctx: Ctx, identityId: string, pairs: ServiceConfigPair[]): Promise<void> {
  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    await getRow(tctx, identities, identityId);
    for (const p of pairs) {
      if (!p.serviceId) throw fieldError('serviceId', 'serviceId is required', p.serviceId);
      if (!p.configId) throw fieldError('configId', 'configId is required', p.configId);
      const service = await trx.selectFrom('services').select('id').where('id', '=', p.serviceId).executeTakeFirst();
      if (!service) throw fieldError('serviceId', 'no service found with the given id', p.serviceId);
      const config = await trx.selectFrom('configs').select(['id', 'configTypeId']).where('id', '=', p.configId).executeTakeFirst();
      if (!config) throw fieldError('configId', 'no config found with the given id', p.configId);
      await trx
        .insertInto('identity_service_configs')
        .values({ identityId, serviceId: p.serviceId, configTypeId: config.configTypeId, configId: p.configId })
        .onConflict((oc) => oc.columns(['identityId', 'serviceId', 'configTypeId']).doUpdateSet({ configId: p.configId }))
        .execute();
    }
  });
}

/**
 * Removes assignments: the listed (service, config) pairs, every config of a service when a pair names no
 * config, and everything when no pair is given.
 */
export async function removeIdentityServiceConfigs(ctx: Ctx, identityId: string, pairs: ServiceConfigPair[] | undefined): Promise<void> {
  await withTx(ctx.db, async (trx) => {
    await getRow(withDb(ctx, trx), identities, identityId);
    if (!pairs || pairs.length === 0) {
      await trx.deleteFrom('identity_service_configs').where('identityId', '=', identityId).execute();
      return;
    }
    for (const p of pairs) {
      if (!p.serviceId) throw fieldError('serviceId', 'serviceId is required', p.serviceId);
      let q = trx.deleteFrom('identity_service_configs').where('identityId', '=', identityId).where('serviceId', '=', p.serviceId);
      if (p.configId) q = q.where('configId', '=', p.configId);
      await q.execute();
    }
  });
}
