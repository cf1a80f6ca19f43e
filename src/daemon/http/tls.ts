/**
 * The client certificates of a request's TLS connection. The listener requests but does not require them
 * (server.ts), so a connection may carry none, or one no CA vouches for: trust is decided by the model.
 */
import type { TLSSocket, DetailedPeerCertificate } from 'node:tls';
import type { FastifyRequest } from 'fastify';
import type { PeerCertificates } from '../../model/services/authentication/authenticate-cert.js';
import { fingerprintDer } from '../../pki/index.js';

/**
 * Cipher suites the listener offers: TLS 1.3's (all AEAD) and, for TLS 1.2, only ECDHE key exchange with
 * AES-GCM or ChaCha20-Poly1305, so no CBC or static-RSA suite can be negotiated. TLS 1.3 suites must be named
 * here too: a list without them would turn TLS 1.3 off.
 */
export const LISTENER_CIPHERS = [
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'TLS_AES_128_GCM_SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
].join(':');

/** The listener's secure-context options; used at start and whenever its CA list is refreshed. */
export function listenerSecureContext(material: { key: string; cert: string; ca: string }) {
  return {
    key: material.key,
    cert: material.cert,
    ca: material.ca,
    ciphers: LISTENER_CIPHERS,
    minVersion: 'TLSv1.2' as const,
    honorCipherOrder: true,
  };
}

/**
 * The leaf the client presented and the rest of its chain (parity: §5.3, extra peer certificates are
 * intermediates). Node completes the chain from the listener's own CA store, so a client that sent only its
 * leaf looks the same as one that sent leaf + intermediate: that only adds certificates the verifier trusts
 * anyway, but it is why the reference's `improperClientCertChain` flag cannot be computed here and is not sent.
 * Undefined when the connection is not TLS or carries no client certificate.
 */
export function peerCertificates(req: FastifyRequest): PeerCertificates | undefined {
  const socket = req.raw.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== 'function') return undefined;
  const leaf = socket.getPeerCertificate(true) as DetailedPeerCertificate | null;
  if (!leaf || !leaf.raw || leaf.raw.length === 0) return undefined;
  const intermediates: Uint8Array[] = [];
  const seen = new Set<string>([leaf.fingerprint256]);
  let cur: DetailedPeerCertificate | undefined = leaf.issuerCertificate;
  // A self-signed certificate is its own issuer: stop at the first repeat.
  while (cur && cur.raw && !seen.has(cur.fingerprint256) && intermediates.length < 10) {
    intermediates.push(cur.raw);
    seen.add(cur.fingerprint256);
    cur = cur.issuerCertificate;
  }
  return { leaf: leaf.raw, intermediates };
}

/** The fingerprint (lowercase hex SHA-1 of the DER) of the request's client certificate, if it sent one. */
export function peerFingerprint(req: FastifyRequest): string | undefined {
  const peer = peerCertificates(req);
  return peer ? fingerprintDer(peer.leaf) : undefined;
}
