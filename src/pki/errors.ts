/**
 * The one error type the PKI module throws.
 *
 * The module is a leaf: it does not know the wire error catalogue. Callers map {@link PkiError.reason} to a
 * wire code, e.g. `not-pem` → COULD_NOT_PARSE_PEM_BLOCK (or COULD_NOT_PARSE_BODY on `/cas/{id}/verify`),
 * `wrong-pem-type` → EXPECTED_PEM_CERTIFICATE, `bad-der` → COULD_NOT_PARSE_DER_BLOCK,
 * `bad-csr` / `unsupported-key` / `over-limit` → COULD_NOT_PROCESS_CSR.
 */

/** Why a PKI operation failed; a closed set so callers can map every case. */
export type PkiErrorReason =
  /** The input holds no PEM block at all (or a block whose body is not base64). */
  | 'not-pem'
  /** A PEM block was found, but of another type than expected (e.g. a key where a certificate belongs). */
  | 'wrong-pem-type'
  /** The PEM block's bytes are not a valid DER structure of the expected kind. */
  | 'bad-der'
  /** A CSR parsed but its self-signature does not verify. */
  | 'bad-csr'
  /** A key's algorithm or size is not accepted (RSA ≥ 2048, EC P-256/P-384/P-521 only). */
  | 'unsupported-key'
  /** A JWT is malformed, not signed by the expected key, or lacks required claims. */
  | 'invalid-jwt'
  /** A JWT verified but its `exp` lies in the past. */
  | 'expired-jwt'
  /** A private key does not belong to the certificate it is paired with. */
  | 'key-mismatch'
  /** A certificate that must be a CA (to sign with it) is not one. */
  | 'not-a-ca'
  /** The PKI files on disk are inconsistent in a way that cannot be repaired without losing trust. */
  | 'corrupt-pki'
  /** An argument is outside what the function accepts (e.g. no usable host for a server certificate). */
  | 'invalid-argument'
  /** An input is beyond a bound checked before parsing it (a CSR over 32 KiB or asking for over 100 SANs). */
  | 'over-limit';

/** Error thrown by every function of `src/pki`; `reason` says what went wrong in a machine-readable way. */
export class PkiError extends Error {
  override readonly name = 'PkiError';

  constructor(
    readonly reason: PkiErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** True when `err` is a {@link PkiError}, optionally with the given reason. */
export function isPkiError(err: unknown, reason?: PkiErrorReason): err is PkiError {
  return err instanceof PkiError && (reason === undefined || err.reason === reason);
}
