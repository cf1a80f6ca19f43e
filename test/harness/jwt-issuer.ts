/**
 * An external identity provider inside a test: signing keys, JWTs signed with jose, and a JWKS endpoint served on
 * an ephemeral loopback HTTP port (whose keys a test can rotate, or make hang, fail or oversized). Fixtures: no asserts.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
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
  /** Seconds from now; negative for an expired token (default 300); null for a token without `exp`. */
  expiresIn?: number | null;
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
    .setIssuedAt(now);
  if (opts.expiresIn !== null) jwt.setExpirationTime(now + (opts.expiresIn ?? 300));
  if (opts.aud !== undefined) jwt.setAudience(opts.aud);
  if (opts.notBeforeIn !== undefined) jwt.setNotBefore(now + opts.notBeforeIn);
  return jwt.sign(key);
}

export const signWith = (k: SigningKey, opts: Omit<TokenOptions, 'kid' | 'alg'>) =>
  signJwt(k.privateKey, { ...opts, kid: k.kid, alg: k.alg });

/**
 * A JWKS endpoint on 127.0.0.1; `mode` makes it answer normally, with an error or with a huge body, or hold the
 * request unanswered (`hang`) until {@link release} answers it as the mode then says, or the server closes.
 */
export class JwksServer {
  keys: JWK[] = [];
  hits = 0;
  mode: 'ok' | 'hang' | 'error' | 'huge' = 'ok';
  private server!: Server;
  private held: ServerResponse[] = [];
  private hitWaiters: { n: number; resolve: () => void }[] = [];
  url = '';

  static async start(keys: JWK[] = []): Promise<JwksServer> {
    const s = new JwksServer();
    s.keys = keys;
    s.server = createServer((req, res) => {
      s.hits++;
      s.hitWaiters = s.hitWaiters.filter((w) => (s.hits >= w.n ? void w.resolve() : true));
      if (s.mode !== 'hang') return s.answer(res);
      s.held.push(res);
      res.on('close', () => (s.held = s.held.filter((r) => r !== res)));
    });
    await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
    s.url = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}/jwks.json`;
    return s;
  }

  private answer(res: ServerResponse): void {
    if (this.mode === 'error') return void res.writeHead(500).end('down');
    res.writeHead(200, { 'content-type': 'application/json' });
    if (this.mode === 'huge')
      return void res.end(JSON.stringify({ keys: this.keys, pad: 'x'.repeat(2 * 1024 * 1024) }));
    res.end(JSON.stringify({ keys: this.keys }));
  }

  /** Resolves once `n` requests have arrived in all. */
  hitsReach(n: number): Promise<void> {
    if (this.hits >= n) return Promise.resolve();
    return new Promise((resolve) => this.hitWaiters.push({ n, resolve }));
  }

  /** Requests held unanswered right now. */
  get holding(): number {
    return this.held.length;
  }

  /** Answers the held requests as `mode` now says (normally, if it is still `hang`). */
  release(): void {
    const held = this.held;
    this.held = [];
    for (const res of held) this.answer(res);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
