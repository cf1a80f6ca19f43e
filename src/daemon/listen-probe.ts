/**
 * Checks the listen address before the controller writes anything (PKI, token key, store, default admin): a
 * busy port or a host that is not this machine's is reported at once, not after a first start has filled the
 * data dir (docs/decisions.md, "Serve fails loudly"). A plain TCP socket is bound and closed again.
 */
import { createServer } from 'node:net';

const REASONS: Record<string, string> = {
  EADDRINUSE: 'the address is already in use',
  EADDRNOTAVAIL: 'the host is not an address of this machine',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved now',
};

export function probeListen(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (e: NodeJS.ErrnoException) => {
      const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      const reason = REASONS[e.code ?? ''] ?? e.message;
      reject(new Error(`cannot listen on ${where}: ${reason}${e.code ? ` (${e.code})` : ''}`));
    });
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}
