/**
 * Configs: named data of a config type, validated against the type's schema on create, update and patch
 * (400 naming the failing path). The type is fixed at create. A config used by a service cannot be deleted.
 */
import { Type } from '../schema-type.js';
import { configTypeByIdOrName } from '../../store/configs.js';
import type { Ctx } from '../ctx.js';
import { fieldError } from '../errors.js';
import { validateAgainst } from '../json-schema.js';
import { attachRefs } from '../refs.js';
import type { Input, ResourceDef, Row, WriteMode } from '../resource.js';
import { NameSchema, ObjectSchema } from '../schemas.js';

/** The config type by id, or by name (the reference also accepts a name here). */
const findConfigType = (ctx: Ctx, idOrName: string) => configTypeByIdOrName(ctx.db, idOrName);

async function prepare(ctx: Ctx, input: Input, mode: WriteMode, existing?: Row): Promise<Input> {
  const out = { ...input };
  const typeRef = mode === 'create' ? (out.configTypeId as string) : (existing!.configTypeId as string);
  const type = await findConfigType(ctx, typeRef);
  if (!type) throw fieldError('configTypeId', 'no config type found with the given id', typeRef);
  if (mode === 'create') out.configTypeId = type.id;
  if (out.data !== undefined) validateAgainst(type.schema, out.data);
  return out;
}

export const configs: ResourceDef = {
  name: 'configs',
  label: 'config',
  table: 'configs',
  schemaName: 'config',
  props: {
    name: { schema: NameSchema, storage: 'text', create: 'required', update: 'required', patch: true, filter: true },
    configTypeId: { schema: Type.String({ minLength: 1 }), storage: 'text', create: 'required' },
    data: { schema: ObjectSchema, storage: 'json', create: 'required', update: 'required', patch: true, filter: true },
  },
  unique: ['name'],
  extraFields: { type: { kind: 'scalar', type: 'string', column: 'configTypeId' } },
  blockingRefs: [{ table: 'services_configs', column: 'value', idColumn: 'ownerId', entity: 'services' }],
  hooks: {
    prepare,
    decorate: (ctx, rows) =>
      attachRefs(ctx, rows, {
        idField: 'configTypeId',
        as: 'configType',
        table: 'config_types',
        collection: 'config-types',
      }),
  },
  ops: {
    list: 'listConfigs',
    create: 'createConfig',
    detail: 'detailConfig',
    update: 'updateConfig',
    patch: 'patchConfig',
    delete: 'deleteConfig',
  },
  envelopes: { list: 'listConfigsEnvelope', detail: 'detailConfigEnvelope' },
};
