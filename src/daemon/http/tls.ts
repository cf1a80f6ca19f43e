/**
 * The client certificates of a request's TLS connection. The listener requests but does not require them
 * (server.ts), so a connection may carry none, or one no CA vouches for: trust is decided by the model.
 */
import type { TLSSocket, DetailedPeerCertificate } from 'node:tls';
import type { FastifyRequest } from 'fastify';
import type { PeerCertificates } from '../../model/services/authenticate-cert.js';

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
