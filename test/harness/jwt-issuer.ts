/**
 * An external identity provider inside a test: signing keys, JWTs signed with jose, and a JWKS endpoint served on
 * an ephemeral loopback HTTP port (whose keys a test can rotate, or make slow or oversized). Fixtures: no asserts.
 */
import { createServer, type Server } from 'node:http';
import { createPrivateKey, type KeyObject, type webcrypto } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import { newRootCa } from './third-party-pki.js';

export interface SigningKey {
  kid: string;
  alg: 'ES256' | 'RS256';
  privateKey: KeyObject | webcrypto.CryptoKey;
  jwk: JWK;
}

export async function newSigningKey(kid: string, alg: 'ES256' | 'RS256' = 'ES256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** A self-signed certificate (PEM) and its EC key, for a `certPem` signer. */
export async function newCertSigner(commonName: string): Promise<{ certPem: string; key: KeyObject }> {
  const ca = await newRootCa(commonName);
  return { certPem: ca.certPem, key: createPrivateKey(ca.keyPem) };
}

export interface TokenOptions {
  iss: string;
  aud?: string | string[];
  /** Seconds from now; negative for an expired token (default 300). */
  expiresIn?: number;
  /** Seconds from now for `nbf`. */
  notBeforeIn?: number;
  kid?: string;
  alg?: string;
  claims?: JWTPayload;
}

export async function signJwt(key: KeyObject | webcrypto.CryptoKey, opts: TokenOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ ...opts.claims })
    .setProtectedHeader({ alg: opts.alg ?? 'ES256', ...(opts.kid !== undefined && { kid: opts.kid }) })
    .setIssuer(opts.iss)
    .setIssuedAt(now)
    .setExpirationTime(now + (opts.expiresIn ?? 300));
  if (opts.aud !== undefined) jwt.setAudience(opts.aud);
  if (opts.notBeforeIn !== undefined) jwt.setNotBefore(now + opts.notBeforeIn);
  return jwt.sign(key);
}

export const signWith = (k: SigningKey, opts: Omit<TokenOptions, 'kid' | 'alg'>) =>
  signJwt(k.privateKey, { ...opts, kid: k.kid, alg: k.alg });

/** A JWKS endpoint on 127.0.0.1; `mode` makes it answer normally, never, with an error or with a huge body. */
export class JwksServer {
  keys: JWK[] = [];
  hits = 0;
  mode: 'ok' | 'hang' | 'error' | 'huge' = 'ok';
  private server!: Server;
  url = '';

  static async start(keys: JWK[] = []): Promise<JwksServer> {
    const s = new JwksServer();
    s.keys = keys;
    s.server = createServer((req, res) => {
      s.hits++;
      if (s.mode === 'hang') return; // never answers; closed with the server
      if (s.mode === 'error') return void res.writeHead(500).end('down');
      res.writeHead(200, { 'content-type': 'application/json' });
      if (s.mode === 'huge') return void res.end(JSON.stringify({ keys: s.keys, pad: 'x'.repeat(2 * 1024 * 1024) }));
      res.end(JSON.stringify({ keys: s.keys }));
    });
    await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
    s.url = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}/jwks.json`;
    return s;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
