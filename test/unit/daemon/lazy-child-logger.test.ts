/** Request loggers made on first use (src/daemon/log.ts): same lines as a pino child, nothing made for nothing. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger, lazyChildLogger } from '../../../src/daemon/log.js';

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { logger: createLogger(level, stream), lines };
}

const settle = () => new Promise((r) => setImmediate(r));

test('a level that is off writes nothing and makes no child; one that is on writes with the bindings', async () => {
  const { logger, lines } = capture('warn');
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...a: Parameters<typeof child>) => (children++, child(...a))) as typeof logger.child;
  const req = lazyChildLogger(logger, { reqId: 'r-1' }, {});
  req.info({ x: 1 }, 'not written');
  req.debug('not written');
  await settle();
  assert.equal(children, 0);
  assert.equal(lines.length, 0);
  req.warn({ code: 'X' }, 'written');
  req.error('also written');
  await settle();
  assert.equal(children, 1, 'one child, made on the first line written');
  assert.deepEqual(
    lines.map((l) => [l.reqId, l.msg, l.level]),
    [
      ['r-1', 'written', 40],
      ['r-1', 'also written', 50],
    ],
  );
  assert.equal(lines[0]!.code, 'X');
  assert.equal(req.level, 'warn');
  assert.equal(req.isLevelEnabled('info'), false);
});

test('secrets are still redacted, and a route with its own options gets a plain child', async () => {
  const { logger, lines } = capture('info');
  lazyChildLogger(logger, { reqId: 'r-2' }, {}).info({ password: 'hunter2', token: 't' }, 'login');
  await settle();
  assert.equal(lines[0]!.password, '***');
  assert.equal(lines[0]!.token, '***');
  const own = lazyChildLogger(logger, { reqId: 'r-3' }, { level: 'debug' });
  own.debug('route level');
  await settle();
  assert.deepEqual([lines[1]!.reqId, lines[1]!.msg], ['r-3', 'route level']);
});
