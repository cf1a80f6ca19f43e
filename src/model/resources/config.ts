/**
 * Configs: named data of a config type, validated against the type's schema on create, update and patch
 * (400 naming the failing path). The type is fixed at create. A config used by a service cannot be deleted.
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';
import { NameSchema, ObjectSchema } from '../schemas.js';

export const configs = defineResource({
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
  ops: {
    list: 'listConfigs',
    create: 'createConfig',
    detail: 'detailConfig',
    update: 'updateConfig',
    patch: 'patchConfig',
    delete: 'deleteConfig',
  },
  envelopes: { list: 'listConfigsEnvelope', detail: 'detailConfigEnvelope' },
});
