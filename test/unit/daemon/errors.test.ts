/** The error handler: unexpected exceptions become 500 UNHANDLED with no internals, logged with the requestId. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { errorHandler } from '../../../src/daemon/http/errors.js';
import { createLogger } from '../../../src/daemon/log.js';
import { DomainError } from '../../../src/model/errors.js';

function appWithLog() {
  let logged = '';
  const stream = new Writable({
    write(chunk, _enc, cb) {
      logged += chunk;
      cb();
    },
  });
  const app = Fastify({ loggerInstance: createLogger('error', stream) as never, genReqId: () => 'req-fixed-1' });
  app.setErrorHandler(errorHandler);
  app.get('/boom', async () => {
    throw new Error('database file /secret/path is corrupt');
  });
  app.get('/domain', async () => {
    throw new DomainError('NOT_FOUND', { urlVars: { id: 'x' } });
  });
  return { app, logs: () => logged };
}

test('an unexpected exception is 500 UNHANDLED without internals, and is logged with the requestId', async () => {
  const { app, logs } = appWithLog();
  const res = await app.inject({ method: 'GET', url: '/boom' });
  assert.equal(res.statusCode, 500);
  const body = res.json();
  assert.equal(body.error.code, 'UNHANDLED');
  assert.equal(body.error.requestId, 'req-fixed-1');
  assert.ok(!res.body.includes('/secret/path'), 'no internals in the answer');
  assert.ok(!res.body.includes('stack'), 'no stack in the answer');
  assert.deepEqual(body.meta, { apiVersion: '0.0.1', apiEnrollmentVersion: '0.0.1' });
  assert.match(logs(), /req-fixed-1/);
  assert.match(logs(), /secret\/path/, 'the log keeps the detail for operators');
});

test('domain errors keep their code, status and urlVars', async () => {
  const { app } = appWithLog();
  const res = await app.inject({ method: 'GET', url: '/domain' });
  assert.equal(res.statusCode, 404);
  assert.equal(res.json().error.code, 'NOT_FOUND');
  assert.deepEqual(res.json().error.args.urlVars, { id: 'x' });
});
