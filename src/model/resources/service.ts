/**
 * Services (seed §2.14): `encryptionRequired` is set at create and fixed after; `configs` hold at most one
 * config per config type; role attributes feed the policies. The per-identity `permissions`, `config` and
 * `postureQueries` are filled by the access engine where an identity is looking (services/service-listing.ts);
 * elsewhere (sub-listings) they are empty.
 */
import { Type } from '../schema-type.js';
import { configsWithTypes } from '../../store/configs.js';
import type { Ctx } from '../ctx.js';
import { fieldError } from '../errors.js';
import { policyTargetHooks } from '../policy/target-hooks.js';
import type { Input, ResourceDef, Row } from '../resource.js';
import { ROLE_ATTRIBUTES_PROP, checkRoleAttributes, NameSchema, StringListSchema } from '../schemas.js';

/** Every id must be a config, and no two of the same config type (400 on `configs`). */
async function checkConfigs(ctx: Ctx, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const found = await configsWithTypes(ctx.db, ids);
  const missing = ids.filter((id) => !found.some((f) => f.id === id));
  if (missing.length > 0) throw fieldError('configs', 'no configs found with the given ids', missing.join(','));
  const seen = new Map<string, string>();
  for (const f of found) {
    const other = seen.get(f.typeId);
    if (other)
      throw fieldError('configs', `multiple configs of config type ${f.typeName}: ${other}, ${f.id}`, ids.join(','));
    seen.set(f.typeId, f.id);
  }
}

async function prepare(ctx: Ctx, input: Input): Promise<Input> {
  const out = { ...input };
  if (out.roleAttributes === null) out.roleAttributes = [];
  if (out.roleAttributes !== undefined) checkRoleAttributes('roleAttributes', out.roleAttributes);
  if (out.configs === null) out.configs = [];
  if (out.configs !== undefined) {
    out.configs = [...new Set(out.configs as string[])];
    await checkConfigs(ctx, out.configs as string[]);
  }
  return out;
}

const targetHooks = policyTargetHooks('service');

export const services: ResourceDef = {
  name: 'services',
  label: 'service',
  table: 'services',
  schemaName: 'service',
  props: {
    name: { schema: NameSchema, storage: 'text', create: 'required', update: 'required', patch: true, filter: true },
    // Accepted by update/patch schemas of the reference but read-only after create: ignored there.
    encryptionRequired: { schema: Type.Boolean(), storage: 'bool', create: 'required', filter: true },
    terminatorStrategy: {
      schema: Type.String(),
      storage: 'text',
      create: 'optional',
      update: 'optional',
      patch: true,
      default: 'smartrouting',
      filter: true,
    },
    roleAttributes: ROLE_ATTRIBUTES_PROP,
    configs: {
      schema: StringListSchema(),
      storage: 'set',
      create: 'optional',
      update: 'optional',
      patch: true,
      nullable: true,
      default: [],
      filter: true,
    },
  },
  unique: ['name'],
  roleFilter: true,
  links: (id) => ({
    configs: `./services/${id}/configs`,
    'service-edge-router-policies': `./services/${id}/service-edge-router-policies`,
    'service-policies': `./services/${id}/service-policies`,
    terminators: `./services/${id}/terminators`,
  }),
  hooks: {
    prepare,
    ...targetHooks,
    decorate(_ctx, rows: Row[]) {
      for (const r of rows) {
        r.config ??= {};
        r.permissions ??= [];
        r.postureQueries ??= [];
      }
    },
  },
  ops: {
    list: 'listServices',
    create: 'createService',
    detail: 'detailService',
    update: 'updateService',
    patch: 'patchService',
    delete: 'deleteService',
  },
  envelopes: { list: 'listServicesEnvelope', detail: 'detailServiceEnvelope' },
};
