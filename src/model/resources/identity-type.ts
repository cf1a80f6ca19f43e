/** Identity types: the built-in, read-only list User, Device, Service, Router (decisions.md). */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';

export const identityTypes = defineResource({
  name: 'identity-types',
  label: 'identity type',
  table: 'identity_types',
  schemaName: 'identityType',
  props: {
    name: { schema: Type.String(), storage: 'text', filter: true },
  },
  ops: { list: 'listIdentityTypes', detail: 'detailIdentityType' },
  envelopes: { list: 'listIdentityTypesEnvelope', detail: 'detailIdentityTypeEnvelope' },
});
