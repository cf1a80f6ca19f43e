/**
 * What the authenticator resource definition cannot say for the CLI: the identity as the create argument
 * (given by id or name), `updb` as the default method, the certificate read from a file, and records found
 * by username as well as by id.
 */
import { authenticators, identities } from '../resources.js';
import type { EntitySpec } from '../crud.js';
import { at, col } from '../output.js';

export const authenticatorSpec: EntitySpec = {
  def: authenticators,
  noun: 'authenticator',
  aliases: ['authenticators'],
  nameField: 'username',
  columns: [
    col('ID', 'id'),
    col('METHOD', 'method'),
    { header: 'IDENTITY', value: (r) => at(r, 'identity.name') ?? r.identityId },
    { header: 'USERNAME / FINGERPRINT', value: (r) => r.username ?? r.fingerprint },
  ],
  createArgs: ['identityId'],
  createDefaults: { method: 'updb' },
  flags: {
    identityId: { name: 'identity', ref: identities, description: 'the identity it authenticates' },
    method: { short: 'm', choices: ['updb', 'cert'], description: 'method, updb by default' },
    username: { short: 'u', description: 'username (updb)' },
    password: {
      short: 'p',
      description: "password (updb; checked against the identity's auth policy)",
      fromStdin: 'password-stdin',
    },
    certPem: { name: 'cert', kind: 'file', description: 'certificate PEM file (cert)' },
  },
};
