/**
 * The benchmark's baseline: a bare Fastify server with the controller's TLS material and options, in its
 * own process, answering with a prebuilt body (no database, no serialisation). Each scenario primes it with
 * the controller's own response, so the comparison is with a server sending the same bytes over the same TLS
 * setup; what the controller costs beyond that is its own work per request.
 *   POST /__prime {key, status, body}   store a prebuilt response
 *   ANY  /same/:key                      answer it (a JSON request body is parsed, as the controller does)
 *   POST /argon2/:key                    one Argon2id verification with the controller's parameters, then
 *                                        answer it: the floor for password authentication
 * Usage: node --import tsx bench/baseline-server.ts PKI_DIR → prints the URL on stdout.
 */
import Fastify, { type FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { argon2, hashPassword } from '../src/model/password.js';

const dir = process.argv[2]!;
const app = Fastify({
  https: {
    key: readFileSync(join(dir, 'server.key.pem')),
    cert: readFileSync(join(dir, 'server.cert.pem')) + readFileSync(join(dir, 'intermediate-ca.cert.pem'), 'utf8'),
    requestCert: true,
    rejectUnauthorized: false,
  },
  logger: false,
  bodyLimit: 16 * 1024 * 1024,
});

const bodies = new Map<string, { status: number; body: Buffer }>();
const PASSWORD = 'bench-argon2-password';
const hash = await hashPassword(PASSWORD, { isTransaction: false });

app.post('/__prime', async (req) => {
  const { key, status, body } = req.body as { key: string; status: number; body: string };
  bodies.set(key, { status, body: Buffer.from(body) });
  return { ok: true };
});
const answer = (key: string, reply: FastifyReply) => {
  const b = bodies.get(key);
  if (!b) return reply.code(404).send();
  return reply.code(b.status).header('content-type', 'application/json; charset=utf-8').send(b.body);
};
app.all('/same/:key', (req, reply) => answer((req.params as { key: string }).key, reply));
app.post('/argon2/:key', async (req, reply) => {
  const ok = await argon2.verify(hash, PASSWORD);
  if (!ok) return reply.code(401).send();
  return answer((req.params as { key: string }).key, reply);
});

await app.listen({ host: '127.0.0.1', port: 0 });
const addr = app.server.address();
process.stdout.write(`https://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
