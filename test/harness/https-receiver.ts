/**
 * A webhook receiver for event-sink tests: an HTTPS server on 127.0.0.1 with a certificate from a throwaway
 * root CA (test/harness/third-party-pki.ts), recording each POST it accepts by path, with whether its
 * signature verified. It can answer a chosen status instead, or stop listening and come back on the same port
 * (an outage). Fixture helper: no assertions.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { ExtendedKeyUsage, generateKeyPair, KeyUsage, privateKeyToPem } from '../../src/pki/index.js';
import { newRootCa } from './third-party-pki.js';

export interface ReceivedBatch {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Whether `x-edgectl-signature` is the HMAC-SHA256 of the body under the receiver's secret. */
  signed: boolean;
}

export interface Receiver {
  port: number;
  /** The root CA's certificate (the sinks' `caFile`). */
  caPem: string;
  /** Batches answered 2xx, in the order they arrived. */
  accepted: ReceivedBatch[];
  /** Requests answered otherwise. */
  refused: number;
  /** The status a path answers (default 200). */
  status: Map<string, number>;
  /** Stops listening (connections refused) until `resume`. */
  stop(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

const HOUR = 3_600_000;

/** Verifies a signature header as a receiver should: constant-time, over the raw body. */
export function verifySignature(secret: string, body: Buffer | string, header: string | undefined): boolean {
  const expected = Buffer.from('sha256=' + createHmac('sha256', secret).update(body).digest('hex'));
  const given = Buffer.from(header ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export async function startReceiver(secret: string): Promise<Receiver> {
  const root = await newRootCa('webhook receiver test CA');
  const pair = await generateKeyPair('ec-p256');
  const cert = await root.ca.issue({
    subject: [{ CN: ['127.0.0.1'] }],
    publicKey: pair.publicKey,
    notBefore: new Date(Date.now() - HOUR),
    notAfter: new Date(Date.now() + 12 * HOUR),
    isCA: false,
    keyUsage: KeyUsage.digitalSignature | KeyUsage.keyAgreement,
    extendedKeyUsage: [ExtendedKeyUsage.serverAuth],
    sans: { hosts: ['127.0.0.1', 'localhost'] },
  });
  const sockets = new Set<Socket>();
  const receiver: Receiver = {
    port: 0,
    caPem: root.certPem,
    accepted: [],
    refused: 0,
    status: new Map(),
    stop: () => closeServer(),
    resume: () => listen(receiver.port),
    close: () => closeServer(),
  };
  let server: Server | undefined;
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      const s = createServer({ key: privateKeyToPem(pair.privateKey), cert: cert.pem }, (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks);
          const path = (req.url ?? '').split('?')[0]!;
          const status = receiver.status.get(path) ?? 200;
          if (status >= 200 && status < 300)
            receiver.accepted.push({
              path,
              headers: req.headers,
              body: body.toString(),
              signed: verifySignature(secret, body, req.headers['x-edgectl-signature'] as string | undefined),
            });
          else receiver.refused++;
          res.writeHead(status, { 'content-type': 'text/plain' }).end(String(status));
        });
      });
      s.on('connection', (sock: Socket) => {
        sockets.add(sock);
        sock.on('close', () => sockets.delete(sock));
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        const a = s.address();
        receiver.port = typeof a === 'object' && a ? a.port : port;
        server = s;
        resolve();
      });
    });
  const closeServer = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = undefined;
      if (!s) return resolve();
      for (const sock of sockets) sock.destroy();
      s.close(() => resolve());
    });
  await listen(0);
  return receiver;
}
