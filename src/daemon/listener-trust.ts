/**
 * The CAs the TLS listener names in its certificate request: the controller's own bundle plus every verified
 * third-party CA (parity: docs/reference-notes.md §5.3). The listener only *requests* client certificates and
 * the model decides trust, so this list does not gate authentication; it tells clients (and TLS stacks that
 * pick a certificate by the advertised CA names) which certificates the controller can use, and Node completes
 * presented chains from it.
 *
 * The list follows CA changes live: the model calls `trustChanged` (model/pki.ts) after a CA is verified,
 * updated or deleted, and the refresher re-reads the verified CAs and swaps the listener's secure context
 * (`tls.Server#setSecureContext`). New connections see the new list; open ones keep theirs.
 */
import type { Server as TlsServer } from 'node:tls';
import type { Ctx, Logger } from '../model/ctx.js';
import { verifiedCaPems } from '../model/ca/trust.js';
import { joinPem } from '../pki/index.js';
import type { TlsMaterial } from './server.js';
import { listenerSecureContext } from './http/tls.js';

/** The controller's CA bundle followed by the verified third-party CAs. */
export async function listenerCaPem(ctx: Ctx, controllerBundlePem: string): Promise<string> {
  return joinPem([controllerBundlePem, ...(await verifiedCaPems(ctx))]);
}

/**
 * Returns the `trustChanged` callback for the listener. Calls are coalesced: while a refresh runs, further calls
 * schedule one more run, so the last change always wins. The store is read asynchronously, which also means a
 * call made inside a write transaction reads the committed state (the store serialises access).
 */
export function listenerTrustRefresher(
  server: TlsServer,
  material: TlsMaterial,
  controllerBundlePem: string,
  ctx: Ctx,
  log: Logger,
): () => void {
  let running = false;
  let again = false;
  const run = async (): Promise<void> => {
    running = true;
    try {
      do {
        again = false;
        const ca = await listenerCaPem(ctx, controllerBundlePem);
        server.setSecureContext(listenerSecureContext({ ...material, ca }));
        log.debug({ caCertificates: ca.split('BEGIN CERTIFICATE').length - 1 }, 'TLS listener CA list updated');
      } while (again);
    } catch (err) {
      // A refresh racing the shutdown finds the store closed: nothing to update any more.
      if (!server.listening) return;
      log.error(
        { err },
        'updating the TLS listener CA list failed; verified CAs still authenticate, restart to refresh the list',
      );
    } finally {
      running = false;
    }
  };
  return () => {
    if (running) {
      again = true;
      return;
    }
    void run();
  };
}
