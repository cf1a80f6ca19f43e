/**
 * Auth policies: PATCH merges nested members, the reference's storage clamps apply, and the signers a policy
 * names must exist. `policyForIdentity` is how the authentication services read the policy governing an identity.
 */
import { authPolicyById } from '../../../store/auth-policies.js';
import { existingSignerIds } from '../../../store/external-jwt-signers.js';
import type { Ctx } from '../../ctx.js';
import type { Executor } from '../../../store/db.js';
import type { Input, ResourceHooks, Row } from '../../resource.js';
import type { AuthPolicy } from '../../resources/auth-policy.js';
import { fieldError } from '../../errors.js';

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

export const authPolicyHooks: ResourceHooks = {
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
};

/** The policy governing an identity (its own, or `default`). */
export async function policyForIdentity(db: Executor, authPolicyId: string | null | undefined): Promise<AuthPolicy> {
  const row = (await authPolicyById(db, authPolicyId ?? 'default')) ?? (await authPolicyById(db, 'default'));
  if (!row) throw new Error('the default auth policy is missing');
  return row as AuthPolicy;
}
