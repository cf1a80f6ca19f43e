/**
 * Bounds on the listener's connections, so one client cannot exhaust file descriptors or memory
 * (docs/decisions.md, "Connections"):
 * - a global cap (`maxConnections`: the kernel-accepted socket over it is closed before anything is read);
 * - a cap per source address, checked on the raw TCP socket before any TLS work is spent on it.
 * The deadlines (TLS handshake, headers, whole request) are Node's own server options, set in server.ts.
 */
import type { Server as NetServer, Socket } from 'node:net';

export interface ConnectionLimitOptions {
  maxConnections: number;
  maxConnectionsPerAddress: number;
}

/** `::ffff:127.0.0.1` and `127.0.0.1` are one client. */
const addressKey = (socket: Socket): string => (socket.remoteAddress ?? '').replace(/^::ffff:/i, '');

export interface ConnectionCounter {
  /** Open connections per source address (only addresses with at least one). */
  perAddress(): ReadonlyMap<string, number>;
  /** Closes every open connection, including those still in their TLS handshake (which Node's own
   *  close-all does not know about: it tracks HTTP connections only). */
  destroyAll(): void;
}

export function applyConnectionLimits(server: NetServer, opts: ConnectionLimitOptions): ConnectionCounter {
  server.maxConnections = opts.maxConnections;
  const open = new Map<string, number>();
  const sockets = new Set<Socket>();
  // Prepended: it must run before the TLS layer wraps the socket and starts the handshake.
  server.prependListener('connection', (socket: Socket) => {
    const key = addressKey(socket);
    const count = open.get(key) ?? 0;
    if (count >= opts.maxConnectionsPerAddress) {
      socket.destroy();
      return;
    }
    open.set(key, count + 1);
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      const left = (open.get(key) ?? 1) - 1;
      if (left <= 0) open.delete(key);
      else open.set(key, left);
    });
  });
  return { perAddress: () => open, destroyAll: () => sockets.forEach((s) => s.destroy()) };
}
