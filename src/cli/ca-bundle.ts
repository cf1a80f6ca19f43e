/**
 * The CA bundle a controller publishes at `/edge/client/v1/.well-known/est/cacerts` (base64 PKCS#7 certs-only,
 * docs/reference-notes.md §7.3), fetched WITHOUT certificate verification: it is how a client bootstraps trust.
 * Callers decide what makes it trustworthy: `login` asks the user (or -y), `enroll` checks that the enrollment
 * JWT verifies against the server certificate this bundle validates.
 */
import { CliError } from './io.js';
import { CLIENT_PREFIX, rawRequest } from './transport/http.js';

export interface CaBundle {
  /** Where it came from. */
  source: string;
  /** The certificates as one PEM bundle. */
  pem: string;
  certs: { subject: string; pem: string; der: Buffer }[];
}

export async function fetchPublishedCaBundle(url: string, hint: string): Promise<CaBundle> {
  const wellKnown = url + CLIENT_PREFIX + '/.well-known/est/cacerts';
  const res = await rawRequest('GET', wellKnown, {
    insecure: true,
    headers: { accept: 'application/pkcs7-mime' },
    timeoutMs: 10_000,
  });
  if (res.status !== 200) throw new CliError(`error: ${wellKnown} answered HTTP ${res.status}; ${hint}`, 1);
  // Loaded on demand: only this path needs the PKCS#7 parser.
  const { parsePkcs7Certificates } = await import('../pki/pkcs7.js');
  let certs;
  try {
    certs = parsePkcs7Certificates(res.text);
  } catch (e) {
    throw new CliError(`error: ${wellKnown} did not return a PKCS#7 CA bundle (${(e as Error).message}); ${hint}`, 1);
  }
  if (certs.length === 0) throw new CliError(`error: ${wellKnown} returned no certificate; ${hint}`, 1);
  return {
    source: wellKnown,
    pem: certs.map((c) => c.pem.trimEnd()).join('\n') + '\n',
    certs: certs.map((c) => ({ subject: c.subject, pem: c.pem, der: c.der })),
  };
}
