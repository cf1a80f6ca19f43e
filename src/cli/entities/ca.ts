/**
 * What the CA resource definition cannot say for the CLI: the PEM file as the second create argument, the
 * reference CLI's flag names (`ziti edge create ca NAME PEM [--auth -e] [--autoca -u] [--ottca -o] [-a roles]`,
 * docs/reference-notes.md §11) and the create defaults the API requires (every flag false, no roles).
 */
import type { EntitySpec } from '../crud.js';
import { col } from '../output.js';
import { cas } from '../resources.js';

export { cas };

export const caSpec: EntitySpec = {
  def: cas,
  noun: 'ca',
  aliases: ['cas'],
  columns: [
    col('ID', 'id'),
    col('NAME', 'name'),
    col('VERIFIED', 'isVerified'),
    col('AUTH', 'isAuthEnabled'),
    col('AUTO ENROLL', 'isAutoCaEnrollmentEnabled'),
    col('OTTCA', 'isOttCaEnrollmentEnabled'),
    col('IDENTITY ROLES', 'identityRoles'),
    col('FINGERPRINT', 'fingerprint'),
  ],
  createArgs: ['name', 'certPem'],
  createDefaults: {
    isAuthEnabled: false,
    isAutoCaEnrollmentEnabled: false,
    isOttCaEnrollmentEnabled: false,
    identityRoles: [],
  },
  flags: {
    name: { description: 'name (unique)' },
    certPem: { name: 'pem-file', kind: 'file', description: 'PEM file of the CA certificate' },
    isAuthEnabled: { name: 'auth', short: 'e', description: 'certificates it issued may authenticate' },
    isAutoCaEnrollmentEnabled: {
      name: 'autoca',
      short: 'u',
      description: 'certificates it issued enroll their identity on the fly (/enroll/ca)',
    },
    isOttCaEnrollmentEnabled: {
      name: 'ottca',
      short: 'o',
      description: 'ottca enrollments may use certificates it issued',
    },
    identityRoles: { short: 'a', description: 'role attributes of identities auto-enrolled through it' },
    // The reference CLI's short flags for the external id claim (`-l -m -x -p -z -d`).
    'externalIdClaim.location': { short: 'l' },
    'externalIdClaim.matcher': { short: 'm' },
    'externalIdClaim.matcherCriteria': { short: 'x' },
    'externalIdClaim.parser': { short: 'p' },
    'externalIdClaim.parserCriteria': { short: 'z' },
    'externalIdClaim.index': { short: 'd' },
    identityNameFormat: {
      description:
        'name of auto-enrolled identities: [caName] [caId] [commonName] [requestedName] [identityId] (default [caName]-[commonName])',
    },
  },
  createHelp:
    '\nThe CA starts unverified and is used for nothing until verified: sign a certificate whose CN is the verification\n' +
    'token printed here with the CA, then `edgectl ca verify NAME --cert FILE`.',
};
