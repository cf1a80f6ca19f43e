/**
 * What the identity resource definition cannot say for the CLI: its columns, its short flags (after
 * `ziti edge create identity`: `-A` admin, `-a` role attributes, `-P` auth policy; docs/reference-notes.md §11)
 * and the create defaults (a non-admin `User`, the reference CLI's default type).
 */
import { authPolicies, identities } from '../resources.js';
import { cas } from './ca.js';
import type { EntitySpec } from '../crud.js';
import { at, col } from '../output.js';

export const identitySpec: EntitySpec = {
  def: identities,
  noun: 'identity',
  aliases: ['identities'],
  columns: [
    col('ID', 'id'),
    col('NAME', 'name'),
    // `type` is the reference's entity ref; `typeId` is the same value as a plain string.
    { header: 'TYPE', value: (r) => at(r, 'type.name') ?? r.typeId },
    col('ADMIN', 'isAdmin'),
    col('ATTRIBUTES', 'roleAttributes'),
    { header: 'AUTH POLICY', value: (r) => at(r, 'authPolicy.name') ?? r.authPolicyId },
    col('DISABLED', 'disabled'),
  ],
  createArgs: ['name'],
  createDefaults: { type: 'User', isAdmin: false },
  flags: {
    name: { description: 'name (unique)' },
    type: { short: 't', description: 'identity type, User by default on create' },
    isAdmin: {
      name: 'admin',
      short: 'A',
      description: 'administrator (may use the Management API); not an admin by default',
    },
    authPolicyId: {
      name: 'auth-policy',
      short: 'P',
      ref: authPolicies,
      description: 'authentication policy (default: default)',
    },
    roleAttributes: { short: 'a', description: 'role attributes' },
    externalId: { description: 'external id (unique; matched by external JWT signers)' },
    'enrollment.updb': { description: 'create a password enrollment for this username' },
    'enrollment.ott': { description: 'create a one-time-token enrollment (a certificate from a CSR)' },
    'enrollment.ottca': {
      ref: cas,
      description: 'create a one-time-token enrollment for a certificate issued by this CA',
    },
  },
};
