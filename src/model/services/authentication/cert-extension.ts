/**
 * Extending an identity's network-issued certificate before it expires (parity: docs/reference-notes.md §7.6).
 *
 * Two steps so a client never locks itself out: `extend` signs a new certificate from the client's CSR and
 * keeps it as the authenticator's *unverified* certificate, while the current one keeps working;
 * `extend-verify` is the client's proof that it stored the new certificate, and only then does the new one
 * replace the old (which stops authenticating at once). A second `extend` before verifying replaces the
 * pending certificate.
 */
import {
  certAuthenticatorState,
  promoteCert,
  requestCertExtend,
  setUnverifiedCert,
  type CertAuthenticatorState,
} from '../../../store/authenticators.js';
import { withTx } from '../../../store/db.js';
import {
  CERTIFICATE_PEM_TYPES,
  decodePemBlocks,
  isPkiError,
  parseCertificate,
  parseCertificateDer,
  type ParsedCertificate,
} from '../../../pki/index.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { DomainError, notFound } from '../../errors.js';
import { requirePki } from '../../pki.js';
import { networkIssuedPeer, type PeerCertificates } from './authenticate-cert.js';
import { recordRowChange, rowBefore } from '../../events/operation-events.js';
import { authenticators } from '../../resources/authenticator.js';

type CertAuthenticatorRow = CertAuthenticatorState;

/** The caller's own authenticator (404 otherwise), which must be a network-issued cert one (409 otherwise). */
async function ownNetworkCertAuthenticator(ctx: Ctx, identityId: string, id: string): Promise<CertAuthenticatorRow> {
  const row = await certAuthenticatorState(ctx.db, id);
  if (!row || row.identityId !== identityId) throw notFound(id, 'authenticator');
  if (row.method !== 'cert' || row.caId) {
    throw new DomainError('CAN_NOT_UPDATE_AUTHENTICATOR', {
      urlVars: { id },
      cause: { message: 'only certificate authenticators issued by this network can be extended' },
    });
  }
  return row;
}

export interface ExtendedCertificate {
  /** The controller's CA bundle. */
  ca: string;
  /** The new client certificate followed by the issuing intermediate. */
  clientCert: string;
}

/**
 * `extend`: the request must come over TLS with the authenticator's current certificate (else 401
 * UNAUTHORIZED); the CSR must be usable (else 400 COULD_NOT_PROCESS_CSR). The new certificate names the same
 * identity and is valid for a year.
 */
export async function extendCertAuthenticator(
  ctx: Ctx,
  identityId: string,
  id: string,
  peer: PeerCertificates | undefined,
  csr: unknown,
): Promise<ExtendedCertificate> {
  const pki = requirePki(ctx);
  const row = await ownNetworkCertAuthenticator(ctx, identityId, id);
  const presented = networkIssuedPeer(ctx, peer);
  if (!presented || presented.fingerprint !== row.fingerprint) {
    throw new DomainError('UNAUTHORIZED', {
      urlVars: { id },
      cause: { message: "the request must be made over TLS with the authenticator's current certificate" },
    });
  }
  if (typeof csr !== 'string' || csr.trim() === '')
    throw new DomainError('COULD_NOT_VALIDATE', {
      cause: { field: 'clientCertCsr', reason: 'clientCertCsr is required', value: null },
    });
  let issued;
  try {
    issued = await pki.signClientCsr(csr, { id: identityId, now: ctx.now() });
  } catch (e) {
    if (isPkiError(e)) throw new DomainError('COULD_NOT_PROCESS_CSR', { cause: { message: e.message } });
    throw e;
  }
  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const before = await rowBefore(tctx, authenticators, id);
    await setUnverifiedCert(trx, id, { pem: issued.certPem, fingerprint: issued.fingerprint }, iso(ctx.now()));
    await recordRowChange(tctx, authenticators, id, 'updated', 'authenticator-extended', before);
  });
  return { ca: pki.caBundlePem, clientCert: issued.chainPem };
}

/**
 * `extend-verify`: `clientCert` must be the certificate the last `extend` returned (its leaf, alone or with the
 * chain), else 400 INVALID_CLIENT_CERT. It becomes the authenticator's certificate.
 */
export async function verifyExtendedCertificate(
  ctx: Ctx,
  identityId: string,
  id: string,
  clientCert: unknown,
): Promise<void> {
  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const row = await ownNetworkCertAuthenticator(tctx, identityId, id);
    const invalid = (reason: string) =>
      new DomainError('INVALID_CLIENT_CERT', { urlVars: { id }, cause: { field: 'clientCert', reason, value: '' } });
    if (!row.unverifiedFingerprint) throw invalid('no extension of this authenticator is waiting for verification');
    const block = typeof clientCert === 'string' ? decodePemBlocks(clientCert)[0] : undefined;
    if (!block || !(CERTIFICATE_PEM_TYPES as readonly string[]).includes(block.type))
      throw invalid('clientCert must be a PEM certificate');
    let cert;
    try {
      cert = parseCertificateDer(block.der);
    } catch (e) {
      if (isPkiError(e)) throw invalid('clientCert could not be parsed');
      throw e;
    }
    if (cert.fingerprint !== row.unverifiedFingerprint)
      throw invalid('clientCert is not the certificate issued by the last extend');
    // The request-extend flags are answered; whether the key changed is kept (`lastExtendRolledKeys`).
    const before = await rowBefore(tctx, authenticators, id);
    await promoteCert(trx, id, { pem: cert.pem, fingerprint: cert.fingerprint }, iso(ctx.now()), rolledKeys(row, cert));
    await recordRowChange(tctx, authenticators, id, 'updated', 'authenticator-extend-verified', before);
  });
}

/** Whether the verified certificate has another public key than the one it replaces. */
function rolledKeys(row: CertAuthenticatorRow, cert: ParsedCertificate): boolean {
  if (!row.certPem) return true;
  const spki = (c: ParsedCertificate) => c.publicKey.export({ type: 'spki', format: 'der' });
  return !spki(parseCertificate(row.certPem)).equals(spki(cert));
}

/**
 * `request-extend` (Management API, admin): asks the identity's clients to extend their certificate (and roll
 * its key when `rollKeys`) at their next authentication, which then shows `isCertExtendRequested` /
 * `isCertKeyRollRequested`; a verified extension clears both. Unknown id: 404. Not a certificate authenticator,
 * or one whose certificate another CA issued (this network cannot extend it): 401 UNAUTHORIZED with a cause, as
 * the reference answers for a non-certificate one.
 */
export async function requestCertAuthenticatorExtend(ctx: Ctx, id: string, rollKeys: boolean): Promise<void> {
  await withTx(ctx.db, async (trx) => {
    const row = await certAuthenticatorState(trx, id);
    if (!row) throw notFound(id, 'authenticator');
    if (row.method !== 'cert' || row.caId)
      throw new DomainError('UNAUTHORIZED', {
        urlVars: { id },
        cause: { message: 'only certificate authenticators issued by this network can be asked to extend' },
      });
    const tctx = withDb(ctx, trx);
    const before = await rowBefore(tctx, authenticators, id);
    await requestCertExtend(trx, id, rollKeys, iso(ctx.now()));
    await recordRowChange(tctx, authenticators, id, 'updated', 'authenticator-extend-requested', before);
  });
}
