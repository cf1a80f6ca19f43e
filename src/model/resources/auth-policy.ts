/**
 * Authentication policies: which primary methods an identity may use, lockout, password rules and
 * secondary factors. The system policy `default` always exists and can be neither changed nor deleted
 * (decisions.md, "System records").
 */
import { Type, type TSchema } from '../schema-type.js';
import { defineResource } from '../resource-record.js';
import { NameSchema, StringListSchema } from '../schemas.js';
import type { PasswordRules } from '../password.js';

const opt = <T extends TSchema>(s: T) => Type.Optional(Type.Union([s, Type.Null()]));

const Cert = { allowed: Type.Boolean(), allowExpiredCerts: Type.Boolean() };
const ExtJwt = { allowed: Type.Boolean(), allowedSigners: StringListSchema() };
const Updb = {
  allowed: Type.Boolean(),
  lockoutDurationMinutes: Type.Integer(),
  maxAttempts: Type.Integer(),
  minPasswordLength: Type.Integer(),
  requireMixedCase: Type.Boolean(),
  requireNumberChar: Type.Boolean(),
  requireSpecialChar: Type.Boolean(),
};
const partial = (o: Record<string, TSchema>) =>
  Type.Object(Object.fromEntries(Object.entries(o).map(([k, s]) => [k, opt(s)])), { additionalProperties: true });

const PrimarySchema = Type.Object({ cert: Type.Object(Cert), extJwt: Type.Object(ExtJwt), updb: Type.Object(Updb) });
const PrimaryPatchSchema = Type.Object({
  cert: opt(partial(Cert)),
  extJwt: opt(partial(ExtJwt)),
  updb: opt(partial(Updb)),
});
const SecondarySchema = Type.Object({
  requireTotp: Type.Boolean(),
  requireExtJwtSigner: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
const SecondaryPatchSchema = partial({ requireTotp: Type.Boolean(), requireExtJwtSigner: Type.String() });

export interface AuthPolicy {
  id: string;
  name: string;
  primary: {
    cert: { allowed: boolean; allowExpiredCerts: boolean };
    extJwt: { allowed: boolean; allowedSigners: string[] };
    updb: PasswordRules & { allowed: boolean; lockoutDurationMinutes: number; maxAttempts: number };
  };
  secondary: { requireTotp: boolean; requireExtJwtSigner: string | null };
}

export const authPolicies = defineResource({
  name: 'auth-policies',
  label: 'auth policy',
  table: 'auth_policies',
  schemaName: 'authPolicy',
  props: {
    name: { schema: NameSchema, storage: 'text', create: 'required', update: 'required', patch: true, filter: true },
    primary: {
      schema: PrimarySchema,
      patchSchema: PrimaryPatchSchema,
      storage: 'json',
      create: 'required',
      update: 'required',
      patch: true,
    },
    secondary: {
      schema: SecondarySchema,
      patchSchema: SecondaryPatchSchema,
      storage: 'json',
      create: 'required',
      update: 'required',
      patch: true,
    },
  },
  unique: ['name'],
  blockingRefs: [
    { table: 'identities', column: 'authPolicyId', entity: 'identities' },
    { table: 'external_jwt_signers', column: 'enrollAuthPolicyId', entity: 'external-jwt-signers' },
  ],
  ops: {
    list: 'listAuthPolicies',
    create: 'createAuthPolicy',
    detail: 'detailAuthPolicy',
    update: 'updateAuthPolicy',
    patch: 'patchAuthPolicy',
    delete: 'deleteAuthPolicy',
  },
  envelopes: { list: 'listAuthPoliciesEnvelope', detail: 'detailAuthPolicyEnvelope' },
});
