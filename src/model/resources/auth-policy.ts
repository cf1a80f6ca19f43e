/**
 * Authentication policies: which primary methods an identity may use, lockout, password rules and
 * secondary factors. The system policy `default` always exists and can be neither changed nor deleted
 * (decisions.md, "System records").
 */
import { Type, type TSchema } from '../schema-type.js';
import { authPolicyById } from '../../store/auth-policies.js';
import { existingSignerIds } from '../../store/external-jwt-signers.js';
import type { Ctx } from '../ctx.js';
import type { Executor } from '../../store/db.js';
import type { Input, ResourceDef, Row } from '../resource.js';
import { NameSchema, StringListSchema } from '../schemas.js';
import type { PasswordRules } from '../password.js';
import { fieldError } from '../errors.js';

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

/** Deep merge for PATCH: nested members that are absent or null keep their stored value. */
function mergePatch(base: unknown, patch: unknown): unknown {
  if (patch === null || patch === undefined) return base;
  if (typeof patch !== 'object' || Array.isArray(patch) || typeof base !== 'object' || base === null) return patch;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) out[k] = mergePatch(out[k], v);
  return out;
}

/** Storage clamps of the reference (parity: §5.2): minPasswordLength at least 5, negative counts become 0. */
function normalisePrimary(p: AuthPolicy['primary']): AuthPolicy['primary'] {
  const updb = { ...p.updb };
  updb.minPasswordLength = Math.max(5, updb.minPasswordLength ?? 5);
  updb.maxAttempts = Math.max(0, updb.maxAttempts ?? 0);
  updb.lockoutDurationMinutes = Math.max(0, updb.lockoutDurationMinutes ?? 0);
  return { ...p, updb, extJwt: { ...p.extJwt, allowedSigners: p.extJwt.allowedSigners ?? [] } };
}

/**
 * Signers named as the second factor or among the allowed ones must exist (decisions.md,
 * "External JWT signers").
 */
async function checkFactors(ctx: Ctx, p: Pick<AuthPolicy, 'primary' | 'secondary'>): Promise<void> {
  const s = p.secondary;
  if (s && s.requireExtJwtSigner !== null && (await existingSignerIds(ctx.db, [s.requireExtJwtSigner])).length === 0) {
    throw fieldError(
      'secondary.requireExtJwtSigner',
      'no external JWT signer with this id exists',
      s.requireExtJwtSigner,
    );
  }
  const allowed = p.primary?.extJwt?.allowedSigners ?? [];
  const found = new Set(await existingSignerIds(ctx.db, allowed));
  const missing = allowed.find((id) => !found.has(id));
  if (missing !== undefined)
    throw fieldError('primary.extJwt.allowedSigners', 'no external JWT signer with this id exists', missing);
}

export const authPolicies: ResourceDef = {
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
  blockingRefs: [{ table: 'identities', column: 'authPolicyId', entity: 'identities' }],
  hooks: {
    async prepare(ctx, input: Input, mode, existing?: Row) {
      const out = { ...input };
      if (mode === 'patch' && existing) {
        if (out.primary !== undefined) out.primary = mergePatch(existing.primary, out.primary);
        if (out.secondary !== undefined) {
          const patch = out.secondary as Partial<AuthPolicy['secondary']> | null;
          out.secondary = mergePatch(existing.secondary, patch);
          // null is a value here ("no signer"), not "leave as is": a patch can lift the requirement.
          if (patch?.requireExtJwtSigner === null)
            out.secondary = { ...(out.secondary as AuthPolicy['secondary']), requireExtJwtSigner: null };
        }
      }
      if (out.primary) out.primary = normalisePrimary(out.primary as AuthPolicy['primary']);
      if (out.secondary) {
        const s = out.secondary as AuthPolicy['secondary'];
        out.secondary = { requireTotp: s.requireTotp ?? false, requireExtJwtSigner: s.requireExtJwtSigner ?? null };
      }
      await checkFactors(ctx, out as Pick<AuthPolicy, 'primary' | 'secondary'>);
      return out;
    },
  },
  ops: {
    list: 'listAuthPolicies',
    create: 'createAuthPolicy',
    detail: 'detailAuthPolicy',
    update: 'updateAuthPolicy',
    patch: 'patchAuthPolicy',
    delete: 'deleteAuthPolicy',
  },
  envelopes: { list: 'listAuthPoliciesEnvelope', detail: 'detailAuthPolicyEnvelope' },
};

/** The policy governing an identity (its own, or `default`). */
export async function policyForIdentity(db: Executor, authPolicyId: string | null | undefined): Promise<AuthPolicy> {
  const row = (await authPolicyById(db, authPolicyId ?? 'default')) ?? (await authPolicyById(db, 'default'));
  if (!row) throw new Error('the default auth policy is missing');
  return row as AuthPolicy;
}
