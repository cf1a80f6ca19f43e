/**
 * Controllers (`GET /controllers`): the controllers serving this store, each recorded by itself when it starts
 * and refreshed by its heartbeat (services/controller/registry.ts; docs/decisions.md, "Controllers and controller
 * settings"). Read-only through the APIs; `isOnline` is derived from the heartbeat.
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';

export const controllers = defineResource({
  name: 'controllers',
  label: 'controller',
  table: 'controllers',
  schemaName: 'controller',
  props: {
    name: { schema: Type.String(), storage: 'text', filter: true },
    certPem: { schema: Type.String(), storage: 'text' },
    fingerprint: { schema: Type.String(), storage: 'text', filter: true },
    // No control plane: always null (the management view shows it, the client view leaves it out).
    ctrlAddress: { schema: Type.String(), storage: 'text', renderNull: true },
    apiAddresses: { schema: Type.Object({}, { additionalProperties: true }), storage: 'json' },
    version: { schema: Type.String(), storage: 'text', hidden: true },
    lastJoinedAt: { schema: Type.String(), storage: 'datetime', filter: true },
    lastSeenAt: { schema: Type.String(), storage: 'datetime', hidden: true, filter: true },
    stoppedAt: { schema: Type.String(), storage: 'datetime', hidden: true },
  },
  ops: { list: 'listControllers' },
  access: { list: 'session' },
  envelopes: { list: 'listControllersEnvelope' },
});
