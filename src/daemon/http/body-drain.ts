/**
 * An answer given before the request body was read (413 over the body limit, or any early refusal) must
 * reach the client. Closing the connection while the client is still sending makes the kernel reset it, and
 * most clients (undici's `fetch` among them) then report EPIPE/ECONNRESET instead of the answer. So the rest of
 * the body is read and thrown away, as web servers' lingering close does, and the connection stays usable.
 * The discarding is bounded by bytes, by the request's own deadline and by silence; a client past any bound is
 * cut off (docs/decisions.md, "Connections").
 */
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface DrainBounds {
  /** Most bytes of an unread body read and discarded; a body declared larger keeps `connection: close`. */
  maxBytes: number;
  /** The request's whole time, counted from its start (as the listener's request timeout is). */
  requestTimeoutMs: number;
  /** Longest silence of the client while its body is drained. */
  idleMs: number;
}

/**
 * Installs the draining on `app`. `draining` receives every socket while its body is being discarded: an
 * answer is already on the wire there, so a late client error on it (the listener's request timeout, broken
 * framing) must close the connection, not write a second answer.
 */
export function drainUnreadBodies(app: FastifyInstance, bounds: DrainBounds, draining: WeakSet<Duplex>): void {
  // `complete` is the HTTP parser's word; a request injected in-process (the offline CLI) has no parser, and
  // its body stream having ended says the same.
  const bodyRead = (raw: { complete?: boolean; readableEnded: boolean }) => raw.complete === true || raw.readableEnded;
  // Requests whose connection was to close after the answer: it closes once their body is drained instead.
  const closeAfterDrain = new WeakSet<object>();
  // One callback hook, not an async one, and no hook after the answer: it runs on every request and almost
  // always has nothing to do.
  app.addHook('onSend', (req, reply, payload, done) => {
    if (bodyRead(req.raw)) return done(null, payload);
    // Where the client still sends, its body is drained once the answer is out (unless read by then).
    reply.raw.once('finish', () => drain(req, reply));
    const declared = Number(req.headers['content-length']);
    // A body declared larger than the bound will not be drained: that connection closes after the answer.
    if (declared > bounds.maxBytes) return done(null, payload);
    // Fastify's `connection: close` here, or the client's own, would close the connection right after the answer,
    // under the client's upload. A client that asked for the close gets it once its body is drained; any other
    // connection stays usable.
    if (!reply.raw.shouldKeepAlive) closeAfterDrain.add(req.raw);
    reply.removeHeader('connection');
    reply.raw.shouldKeepAlive = true;
    done(null, payload);
  });
  /** Once the answer is out: reads and discards the rest of an unread body, within the bounds. */
  const drain = (req: FastifyRequest, reply: FastifyReply): void => {
    const raw = req.raw;
    const socket = raw.socket as Duplex | undefined;
    // An injected request (the offline CLI, in-process benches) has no connection to keep usable: its socket is
    // a stand-in without destroy(), and a bodiless GET's stream is never read to its end.
    if (bodyRead(raw) || raw.destroyed || typeof socket?.destroy !== 'function' || draining.has(socket)) return;
    draining.add(socket);
    let read = 0;
    const cutOff = () => socket.destroy();
    const total = setTimeout(cutOff, Math.max(0, bounds.requestTimeoutMs - reply.elapsedTime));
    // Pushed back by each chunk.
    const idle = setTimeout(cutOff, bounds.idleMs);
    total.unref();
    idle.unref();
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > bounds.maxBytes) return cutOff();
      idle.refresh();
    };
    const finish = () => {
      clearTimeout(total);
      clearTimeout(idle);
      raw.removeListener('data', onData);
      socket.removeListener('close', finish);
      draining.delete(socket);
    };
    // The chunks are dropped as they arrive: nothing is kept, whatever the body's size.
    raw.on('data', onData);
    raw.once('end', () => {
      finish();
      if (closeAfterDrain.has(raw)) socket.end();
    });
    socket.once('close', finish);
    raw.resume();
  };
}
