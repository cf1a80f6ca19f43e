/**
 * Identities: the users, devices, services and routers that authenticate. Field rules follow
 * docs/reference-notes.md §12 "Identity"; disable/enable and the default admin follow docs/reference-notes.md §5.6, §10.4.
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';
import { AttributesSchema, CostSchema, ObjectSchema, PrecedenceSchema, SEARCHABLE_NAME_PROP } from '../schemas.js';

export const IDENTITY_TYPES = ['User', 'Device', 'Service', 'Router'] as const;

const TypeSchema = Type.Union(IDENTITY_TYPES.map((t) => Type.Literal(t)));
const EnrollmentCreateSchema = Type.Object(
  { ott: Type.Optional(Type.Boolean()), ottca: Type.Optional(Type.String()), updb: Type.Optional(Type.String()) },
  { additionalProperties: true },
);

/** Whether a disable is in force now: disabledAt set and no end, or an end still in the future (§10.4). */
export function isDisabled(row: { disabledAt?: unknown; disabledUntil?: unknown }, now: Date): boolean {
  if (!row.disabledAt) return false;
  const until = row.disabledUntil;
  if (!until) return true;
  return new Date(typeof until === 'string' ? until : String(until)).getTime() > now.getTime();
}

export const identities = defineResource({
  name: 'identities',
  label: 'identity',
  table: 'identities',
  schemaName: 'identity',
  props: {
    name: SEARCHABLE_NAME_PROP,
    type: { schema: TypeSchema, storage: 'text', virtual: true, create: 'required', update: 'required', patch: true },
    typeId: { schema: Type.String(), storage: 'text' },
    isAdmin: {
      schema: Type.Boolean(),
      storage: 'bool',
      create: 'required',
      update: 'required',
      patch: true,
      filter: true,
    },
    isDefaultAdmin: { schema: Type.Boolean(), storage: 'bool', default: false, filter: true },
    authPolicyId: {
      schema: Type.String(),
      storage: 'text',
      create: 'optional',
      update: 'optional',
      patch: true,
      nullable: true,
      default: 'default',
      filter: true,
    },
    externalId: {
      schema: Type.String(),
      storage: 'text',
      create: 'optional',
      update: 'optional',
      patch: true,
      nullable: true,
      filter: true,
      renderNull: true,
    },
    roleAttributes: {
      schema: AttributesSchema,
      storage: 'set',
      create: 'optional',
      update: 'optional',
      patch: true,
      default: [],
      filter: true,
    },
    defaultHostingCost: {
      schema: CostSchema,
      storage: 'int',
      create: 'optional',
      update: 'optional',
      patch: true,
      default: 0,
    },
    defaultHostingPrecedence: {
      schema: PrecedenceSchema,
      storage: 'text',
      create: 'optional',
      update: 'optional',
      patch: true,
      default: 'default',
    },
    serviceHostingCosts: {
      schema: Type.Record(Type.String(), CostSchema),
      storage: 'json',
      create: 'optional',
      update: 'optional',
      patch: true,
      default: {},
    },
    serviceHostingPrecedences: {
      schema: Type.Record(Type.String(), PrecedenceSchema),
      storage: 'json',
      create: 'optional',
      update: 'optional',
      patch: true,
      default: {},
    },
    appData: {
      schema: ObjectSchema,
      storage: 'json',
      create: 'optional',
      update: 'optional',
      patch: true,
      default: {},
    },
    envInfo: { schema: ObjectSchema, storage: 'json', default: {} },
    sdkInfo: { schema: ObjectSchema, storage: 'json', default: {} },
    // A new identity is enabled; the null default also makes every stored prop's value known on a create.
    disabledAt: { schema: Type.String(), storage: 'datetime', renderNull: true, default: null },
    disabledUntil: { schema: Type.String(), storage: 'datetime', renderNull: true, default: null },
    enrollment: { schema: EnrollmentCreateSchema, storage: 'json', virtual: true, create: 'optional' },
  },
  unique: ['name', 'externalId'],
  roleFilter: true,
  extraFields: { type: { kind: 'scalar', type: 'string', column: 'typeId' } },
  links: (id) => ({
    authenticators: `./identities/${id}/authenticators`,
    enrollments: `./identities/${id}/enrollments`,
    'edge-router-policies': `./identities/${id}/edge-router-policies`,
    'edge-routers': `./identities/${id}/edge-routers`,
    'service-policies': `./identities/${id}/service-policies`,
    services: `./identities/${id}/services`,
    'failed-service-requests': `./identities/${id}/failed-service-requests`,
    'posture-data': `./identities/${id}/posture-data`,
    'auth-policies': `./auth-policies`,
  }),
  ops: {
    list: 'listIdentities',
    create: 'createIdentity',
    detail: 'detailIdentity',
    update: 'updateIdentity',
    patch: 'patchIdentity',
    delete: 'deleteIdentity',
  },
  envelopes: { list: 'listIdentitiesEnvelope', detail: 'detailIdentityEnvelope' },
});
