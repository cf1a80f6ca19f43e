/**
 * An answer given before the request body was read (413 over the body limit, or any early refusal) must
 * reach the client. Closing the connection while the client is still sending makes the kernel reset it, and
 * most clients then report EPIPE/ECONNRESET instead of the answer. So the rest of the body is read and thrown
 * away, up to a bound in bytes and time, and the connection stays usable; a client sending more than the
 * bound (or too slowly) is cut off (docs/decisions.md, "Connections").
 */
import type { FastifyInstance } from 'fastify';

export interface DrainBounds {
  maxBytes: number;
  timeoutMs: number;
}

export function drainUnreadBodies(app: FastifyInstance, bounds: DrainBounds): void {
  // Callback hooks, not async ones: they run on every request and almost always have nothing to do.
  app.addHook('onSend', (req, reply, payload, done) => {
    if (req.raw.complete) return done(null, payload);
    const declared = Number(req.headers['content-length']);
    // Fastify asks for `connection: close` here; draining instead lets the answer arrive. A body declared larger
    // than the bound will not be drained, so that connection still closes.
    if (!(declared > bounds.maxBytes) && String(reply.getHeader('connection') ?? '').toLowerCase() === 'close')
      reply.removeHeader('connection');
    done(null, payload);
  });
  app.addHook('onResponse', (req, _reply, done) => {
    done();
    const raw = req.raw;
    if (raw.complete || raw.destroyed) return;
    const socket = raw.socket;
    let read = 0;
    const cutOff = () => socket.destroy();
    const timer = setTimeout(cutOff, bounds.timeoutMs);
    timer.unref();
    raw.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > bounds.maxBytes) {
        clearTimeout(timer);
        cutOff();
      }
    });
    raw.once('end', () => clearTimeout(timer));
    socket.once('close', () => clearTimeout(timer));
    raw.resume();
  });
}
