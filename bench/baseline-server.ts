/**
 * The benchmark's baseline: a bare Fastify "hello" route served the same way as the controller (same
 * Fastify options, same TLS material, its own process), so figures can be reported as ratios to it.
 * Usage: node --import tsx bench/baseline-server.ts PKI_DIR → prints the URL on stdout.
 */
import Fastify from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2]!;
const app = Fastify({
  https: {
    key: readFileSync(join(dir, 'server.key.pem')),
    cert: readFileSync(join(dir, 'server.cert.pem')) + readFileSync(join(dir, 'intermediate-ca.cert.pem'), 'utf8'),
    requestCert: true,
    rejectUnauthorized: false,
  },
  logger: false,
});
app.get('/hello', async () => ({ data: { hello: 'world' }, meta: {} }));
await app.listen({ host: '127.0.0.1', port: 0 });
const addr = app.server.address();
process.stdout.write(`https://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
