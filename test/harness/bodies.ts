/** Request bodies the API tests send often, with the parts a test varies as overrides. */

export interface AuthPolicyParts {
  cert?: Record<string, unknown>;
  extJwt?: Record<string, unknown>;
  secondary?: Record<string, unknown>;
}

/** An auth policy allowing every primary method, no lockout and no second factor, changed by `updb` and `parts`. */
export const authPolicyBody = (name: string, updb: Record<string, unknown> = {}, parts: AuthPolicyParts = {}) => ({
  name,
  primary: {
    cert: { allowed: true, allowExpiredCerts: true, ...parts.cert },
    extJwt: { allowed: true, allowedSigners: [], ...parts.extJwt },
    updb: {
      allowed: true,
      minPasswordLength: 5,
      requireMixedCase: false,
      requireNumberChar: false,
      requireSpecialChar: false,
      maxAttempts: 0,
      lockoutDurationMinutes: 0,
      ...updb,
    },
  },
  secondary: { requireTotp: false, requireExtJwtSigner: null, ...parts.secondary },
});
