/**
 * What the auth-policy resource definition cannot say for the CLI: its columns and the body `create` starts
 * from. The nested `primary`/`secondary` members get their flags from the schema (`--updb-min-password-length`,
 * `--no-cert-allowed`, `--require-totp` …), so a policy is creatable from flags alone.
 */
import { authPolicies, externalJwtSigners } from '../resources.js';
import type { EntitySpec } from '../crud.js';
import { at, col, type Rec } from '../output.js';

const allowedMethods = (r: Rec) =>
  (['cert', 'extJwt', 'updb'] as const)
    .filter((m) => at(r, `primary.${m}.allowed`) === true)
    .map((m) => (m === 'extJwt' ? 'ext-jwt' : m))
    .join(',');

const secondary = (r: Rec) =>
  [
    at(r, 'secondary.requireTotp') === true ? 'totp' : '',
    at(r, 'secondary.requireExtJwtSigner') ? `ext-jwt:${at(r, 'secondary.requireExtJwtSigner')}` : '',
  ]
    .filter(Boolean)
    .join(',');

export const authPolicySpec: EntitySpec = {
  def: authPolicies,
  noun: 'auth-policy',
  aliases: ['auth-policies'],
  columns: [
    col('ID', 'id'),
    col('NAME', 'name'),
    { header: 'PRIMARY', value: allowedMethods },
    { header: 'SECONDARY', value: secondary },
    col('UPDB MIN LENGTH', 'primary.updb.minPasswordLength'),
    col('UPDB MAX ATTEMPTS', 'primary.updb.maxAttempts'),
  ],
  createArgs: ['name'],
  // The system policy `default`'s settings: every primary method allowed, no password rules beyond the
  // minimum length, no lockout, no secondary factor.
  createDefaults: {
    primary: {
      cert: { allowed: true, allowExpiredCerts: true },
      extJwt: { allowed: true, allowedSigners: [] },
      updb: {
        allowed: true,
        minPasswordLength: 5,
        requireMixedCase: false,
        requireNumberChar: false,
        requireSpecialChar: false,
        maxAttempts: 0,
        lockoutDurationMinutes: 0,
      },
    },
    secondary: { requireTotp: false, requireExtJwtSigner: null },
  },
  flags: {
    primary: { description: 'primary methods (members not given keep their values)' },
    secondary: { description: 'secondary factors' },
    'primary.extJwt.allowedSigners': { ref: externalJwtSigners, description: 'external JWT signers allowed' },
    'secondary.requireExtJwtSigner': {
      ref: externalJwtSigners,
      description: 'external JWT signer whose token every request must also carry',
    },
  },
  createHelp:
    '\nWithout flags a new policy has the settings of the system policy `default`: cert, ext-jwt and updb allowed,\nminimum password length 5, no lockout, no secondary factor.',
};
