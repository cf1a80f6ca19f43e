/**
 * An identity's own service configs (`identity_service_configs`): one per (identity, service, config type),
 * the config type being the config's, so assigning another config of that type replaces the first.
 */
import type { TypedExecutor } from './executor.js';

export interface IdentityServiceConfig {
  serviceId: string;
  serviceName: string;
  configId: string;
  configName: string;
}

/** An identity's assignments with the service and config names, by service then config. */
export function identityServiceConfigs(db: TypedExecutor, identityId: string): Promise<IdentityServiceConfig[]> {
  return db
    .selectFrom('identity_service_configs as x')
    .innerJoin('services as s', 's.id', 'x.serviceId')
    .innerJoin('configs as c', 'c.id', 'x.configId')
    .select(['x.serviceId as serviceId', 's.name as serviceName', 'x.configId as configId', 'c.name as configName'])
    .where('x.identityId', '=', identityId)
    .orderBy('x.serviceId')
    .orderBy('x.configId')
    .execute();
}

export async function serviceExists(db: TypedExecutor, serviceId: string): Promise<boolean> {
  return (await db.selectFrom('services').select('id').where('id', '=', serviceId).executeTakeFirst()) !== undefined;
}

/** The config type of a config; undefined when there is no such config. */
export async function configTypeOfConfig(db: TypedExecutor, configId: string): Promise<string | undefined> {
  return (await db.selectFrom('configs').select('configTypeId').where('id', '=', configId).executeTakeFirst())
    ?.configTypeId;
}

/** Assigns the config, replacing the identity's config of the same type for that service. */
export async function putIdentityServiceConfig(
  db: TypedExecutor,
  a: { identityId: string; serviceId: string; configTypeId: string; configId: string },
): Promise<void> {
  await db
    .insertInto('identity_service_configs')
    .values(a)
    .onConflict((oc) => oc.columns(['identityId', 'serviceId', 'configTypeId']).doUpdateSet({ configId: a.configId }))
    .execute();
}

/** Removes an identity's assignments: all, all of one service, or one (service, config) pair. */
export async function deleteIdentityServiceConfigs(
  db: TypedExecutor,
  identityId: string,
  only?: { serviceId: string; configId?: string },
): Promise<void> {
  let q = db.deleteFrom('identity_service_configs').where('identityId', '=', identityId);
  if (only) q = q.where('serviceId', '=', only.serviceId);
  if (only?.configId) q = q.where('configId', '=', only.configId);
  await q.execute();
}
