/**
 * Services (seed §2.14): `encryptionRequired` is set at create and fixed after; `configs` hold at most one
 * config per config type; role attributes feed the policies. The per-identity `permissions`, `config` and
 * `postureQueries` are filled by the access engine where an identity is looking (services/service-access/service-listing.ts);
 * elsewhere (sub-listings) they are empty.
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';
import { ROLE_ATTRIBUTES_PROP, SEARCHABLE_NAME_PROP, StringListSchema } from '../schemas.js';

export const services = defineResource({
  name: 'services',
  label: 'service',
  table: 'services',
  schemaName: 'service',
  props: {
    name: SEARCHABLE_NAME_PROP,
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
  ops: {
    list: 'listServices',
    create: 'createService',
    detail: 'detailService',
    update: 'updateService',
    patch: 'patchService',
    delete: 'deleteService',
  },
  envelopes: { list: 'listServicesEnvelope', detail: 'detailServiceEnvelope' },
});
