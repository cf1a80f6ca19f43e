/** Identity types: the built-in, read-only list User, Device, Service, Router (decisions.md). */
import { Type } from '../schema-type.js';
import type { ResourceDef } from '../resource.js';

export const identityTypes: ResourceDef = {
  name: 'identity-types',
  label: 'identity type',
  table: 'identity_types',
  schemaName: 'identityType',
  props: {
    name: { schema: Type.String(), storage: 'text', filter: true },
  },
  ops: { list: 'listIdentityTypes', detail: 'detailIdentityType' },
  envelopes: { list: 'listIdentityTypesEnvelope', detail: 'detailIdentityTypeEnvelope' },
};
