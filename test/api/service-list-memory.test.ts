/**
 * What the client's default service pages keep is bounded by bytes (model/services/service-access/service-listing.ts,
 * `MAX_PLAIN_PAGE_BYTES`): every byte a kept page holds alive is counted, the answer sent included. Measured as the
 * page-sized buffers a heap snapshot still finds once twice the bound of page bytes was made: a copy kept beside
 * the cache (the route's envelope of each page used to be) shows as twice the bound. Over TLS: an in-process
 * request without a body leaves the body-drain timers holding it and its answer for a while.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { getHeapSnapshot } from 'node:v8';
import { createUser, startTestServer, type ApiClient, type TestServer, createRecord } from '../harness/server.js';
import { unique } from '../harness/assert.js';
import { MAX_PLAIN_PAGE_BYTES } from '../../src/model/services/service-access/service-listing.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer({ transport: 'tls' });
  admin = await server.admin();
});
after(() => server.close());

const MiB = 1024 * 1024;

/**
 * The bytes of every array buffer of at least `min` bytes still reachable: a heap snapshot (taken after a full
 * collection, so what it lists is what something holds, not garbage awaiting a collection).
 */
async function reachableBuffers(min: number): Promise<number> {
  const chunks: string[] = [];
  for await (const chunk of getHeapSnapshot()) chunks.push(String(chunk));
  const snap = JSON.parse(chunks.join('')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const [type, name, size] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const native = snap.snapshot.meta.node_types[0].indexOf('native');
  let bytes = 0;
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const n = snap.nodes[i + size]!;
    if (
      n >= min &&
      snap.nodes[i + type] === native &&
      snap.strings[snap.nodes[i + name]!]!.endsWith('JSArrayBufferData')
    )
      bytes += n;
  }
  return bytes;
}

test('kept service pages hold no more bytes than their bound', async () => {
  // 20 services, each with a config of ~60 KB: a page of all of them with `configTypes=all` is ~1.2 MB.
  const tag = unique('heavy');
  const typeId = await createRecord(admin, '/config-types', { name: unique('heavy.v1') });
  const filler = 'x'.repeat(1000);
  for (let i = 0; i < 20; i++) {
    const data = Object.fromEntries(Array.from({ length: 60 }, (_, k) => [`k${k}`, filler]));
    const configId = await createRecord(admin, '/configs', { name: unique('cfg'), configTypeId: typeId, data });
    await createRecord(admin, '/services', {
      name: unique('svc'),
      encryptionRequired: true,
      roleAttributes: [tag],
      configs: [configId],
    });
  }
  const u = await createUser(server, admin);
  await createRecord(admin, '/service-policies', {
    name: unique('sp'),
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: [`@${u.id}`],
    serviceRoles: [`#${tag}`],
  });

  // Each request a page of its own (the config types asked are part of its key): twice the bound made in all.
  const page = async (n: number) => {
    const res = await u.client.get(`/services?limit=500&configTypes=all,${n}`);
    assert.equal(res.status, 200, res.text);
    return res.text.length;
  };
  const size = await page(0);
  assert.ok(size > MiB, `a page of ${size} bytes`);
  const pages = Math.ceil((2 * MAX_PLAIN_PAGE_BYTES) / size);
  for (let n = 1; n <= pages; n++) await page(n);
  // Every buffer the size of a page that is still held: the kept pages fill the bound (less one page), and the
  // last answer may still be in the connection's buffers; any other copy the pages hold shows far above.
  const held = await reachableBuffers(size / 2);
  const msg = `buffers of pages held: ${(held / MiB).toFixed(1)} MiB, bound ${MAX_PLAIN_PAGE_BYTES / MiB} MiB`;
  assert.ok(held > MAX_PLAIN_PAGE_BYTES / 2, msg);
  assert.ok(held <= MAX_PLAIN_PAGE_BYTES + size, msg);
});
