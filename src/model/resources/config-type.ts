/**
 * Config types: a name and the JSON Schema that configs of the type must satisfy (seed §2.7). A schema that
 * does not compile is refused; a type that still has configs cannot be deleted (409).
 */
import { defineResource } from '../resource-record.js';
import { NameSchema, ObjectSchema } from '../schemas.js';

export const configTypes = defineResource({
  name: 'config-types',
  label: 'config type',
  table: 'config_types',
  schemaName: 'configType',
  props: {
    name: { schema: NameSchema, storage: 'text', create: 'required', update: 'required', patch: true, filter: true },
    schema: {
      schema: ObjectSchema,
      storage: 'json',
      create: 'optional',
      update: 'optional',
      patch: true,
      default: {},
      filter: true,
    },
  },
  unique: ['name'],
  blockingRefs: [{ table: 'configs', column: 'configTypeId', entity: 'configs' }],
  links: (id) => ({ configs: `./config-types/${id}/configs` }),
  ops: {
    list: 'listConfigTypes',
    create: 'createConfigType',
    detail: 'detailConfigType',
    update: 'updateConfigType',
    patch: 'patchConfigType',
    delete: 'deleteConfigType',
  },
  envelopes: { list: 'listConfigTypesEnvelope', detail: 'detailConfigTypeEnvelope' },
});
