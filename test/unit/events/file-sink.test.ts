/**
 * The file sink rotates past its size or its age, keeping `maxFiles` older files, each 0600; the stdout sink
 * writes lines; filters take namespaces and types; retries back off; the `events` config section takes days,
 * paths in the data dir, every sink type and its settings, and refuses what it does not know.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSink, StdoutSink } from '../../../src/daemon/event-sinks.js';
import { backoffMs } from '../../../src/daemon/event-delivery.js';
import { eventFilter } from '../../../src/model/events/deliver.js';
import { parseEventsConfig } from '../../../src/daemon/events-config.js';

test('past its size the file is rotated, the oldest dropped, every file 0600', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-sink-'));
  try {
    const path = join(dir, 'logs', 'events.jsonl');
    const sink = new FileSink({ type: 'file', name: `file:${path}`, path, maxBytes: 40, maxFiles: 2 });
    const ev = (n: number) => JSON.stringify({ id: `e${n}`, pad: 'x'.repeat(10) });
    for (let n = 1; n <= 5; n++) await sink.write([ev(n)]);
    assert.equal(readFileSync(path, 'utf8'), `${ev(5)}\n`);
    assert.equal(readFileSync(`${path}.1`, 'utf8'), `${ev(4)}\n`);
    assert.equal(readFileSync(`${path}.2`, 'utf8'), `${ev(3)}\n`);
    assert.equal(existsSync(`${path}.3`), false, 'only maxFiles rotated files are kept');
    for (const f of [path, `${path}.1`, `${path}.2`]) assert.equal(statSync(f).mode & 0o777, 0o600, f);
    assert.equal(sink.accepts('authentication', 'fail'), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('past its age the file is rotated too (besides its size)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-sink-'));
  try {
    const path = join(dir, 'events.jsonl');
    let now = 1_000_000;
    const sink = new FileSink(
      { type: 'file', name: `file:${path}`, path, maxBytes: 1 << 20, maxAgeMs: 60_000, maxFiles: 3 },
      () => now,
    );
    await sink.write(['{"id":"a"}']);
    now += 30_000;
    await sink.write(['{"id":"b"}']);
    assert.equal(existsSync(`${path}.1`), false, 'not yet a minute old');
    now += 31_000;
    await sink.write(['{"id":"c"}']);
    assert.equal(readFileSync(`${path}.1`, 'utf8'), '{"id":"a"}\n{"id":"b"}\n');
    assert.equal(readFileSync(path, 'utf8'), '{"id":"c"}\n');
    now += 59_000;
    await sink.write(['{"id":"d"}']);
    assert.equal(readFileSync(path, 'utf8'), '{"id":"c"}\n{"id":"d"}\n', 'the new file’s age counts from its start');
    for (const f of [path, `${path}.1`]) assert.equal(statSync(f).mode & 0o777, 0o600, f);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a line cut short by a crash is ended before the next write, so every whole event stays a line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-sink-'));
  try {
    const path = join(dir, 'events.jsonl');
    writeFileSync(path, '{"id":"a"}\n{"id":"b', { mode: 0o600 });
    const sink = new FileSink({ type: 'file', name: `file:${path}`, path, maxBytes: 1 << 20, maxFiles: 1 });
    await sink.write(['{"id":"b"}']);
    await sink.write(['{"id":"c"}']);
    assert.equal(readFileSync(path, 'utf8'), '{"id":"a"}\n{"id":"b\n{"id":"b"}\n{"id":"c"}\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a sink takes the namespaces and types of its filter only', () => {
  const f = eventFilter(['authentication', 'entityChange'], ['authentication.fail', 'entityChange']);
  assert.equal(f('authentication', 'fail'), true);
  assert.equal(f('authentication', 'success'), false);
  assert.equal(f('entityChange', 'deleted'), true);
  assert.equal(f('apiSession', 'created'), false);
  assert.equal(eventFilter(undefined, undefined)('apiSession', 'created'), true);
  assert.equal(eventFilter(undefined, ['apiSession.deleted'])('apiSession', 'deleted'), true);
});

test('the stdout sink writes one event a line and resolves once written', async () => {
  const chunks: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const sink = new StdoutSink({ type: 'stdout', name: 'stdout', types: ['entityChange'] }, out);
  await sink.write(['{"id":"1"}', '{"id":"2"}']);
  assert.equal(chunks.join(''), '{"id":"1"}\n{"id":"2"}\n');
  assert.equal(sink.accepts('authentication', 'fail'), false);
});

test('webhook retries back off exponentially, jittered, up to the maximum', () => {
  const policy = { initialBackoffMs: 100, maxBackoffMs: 1000, maxAttempts: 0, maxAgeMs: 0 };
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6].map((n) => backoffMs(policy, n, () => 1)),
    [100, 200, 400, 800, 1000, 1000],
  );
  assert.equal(
    backoffMs(policy, 3, () => 0),
    200,
    'half of it is jitter',
  );
});

test('the events config: defaults, days, relative paths, filters and every sink type; bad settings are named', () => {
  const d = parseEventsConfig({}, '/data');
  assert.equal(d.retentionMs, 30 * 86_400_000);
  assert.equal(d.maxEvents, 1_000_000);
  assert.deepEqual(d.sinks, []);
  const c = parseEventsConfig(
    {
      retention: '7d',
      backlog: 500,
      sinks: [
        { type: 'file', path: 'ev.jsonl', namespaces: ['authentication'], maxFiles: 0, maxAge: '24h' },
        { type: 'stdout', types: ['entityChange', 'authentication.fail'], backlog: 10 },
        { type: 'webhook', url: 'https://u:p@siem.example/in?token=t', secret: 'a-shared-secret-of-16+' },
      ],
    },
    '/data',
  );
  assert.equal(c.retentionMs, 7 * 86_400_000);
  assert.deepEqual(c.sinks[0], {
    type: 'file',
    name: 'file:/data/ev.jsonl',
    path: '/data/ev.jsonl',
    namespaces: ['authentication'],
    backlog: 500,
    maxBytes: 100 * 1024 * 1024,
    maxAgeMs: 86_400_000,
    maxFiles: 0,
  });
  assert.deepEqual(c.sinks[1], {
    type: 'stdout',
    name: 'stdout',
    types: ['entityChange', 'authentication.fail'],
    backlog: 10,
  });
  const w = c.sinks[2]!;
  assert.equal(w.type, 'webhook');
  assert.equal(w.name, 'webhook:https://siem.example/in', 'no credentials or query in the name');
  assert.deepEqual(w.type === 'webhook' && w.retry, {
    initialBackoffMs: 1000,
    maxBackoffMs: 60_000,
    maxAttempts: 20,
    maxAgeMs: 3_600_000,
  });
  assert.equal(parseEventsConfig({ retention: '720h' }, '/d').retentionMs, 30 * 86_400_000);
  const bad: [Parameters<typeof parseEventsConfig>[0], RegExp][] = [
    [{ retention: 'soon' }, /events\.retention/],
    [{ sinks: [{ type: 'file', path: 'a', url: 'x' }] }, /unknown key "url"/],
    [{ sinks: [{ type: 'kafka' }] }, /type must be one of/],
    [{ sinks: [{ type: 'file', path: 'a', namespaces: ['x'] }] }, /namespaces/],
    [{ sinks: [{ type: 'file', path: 'a', types: ['authentication.'] }] }, /types/],
    [
      {
        sinks: [
          { type: 'file', path: 'a' },
          { type: 'file', path: '/d/a' },
        ],
      },
      /another sink/,
    ],
    [{ sinks: { type: 'file' } }, /must be a list/],
    [{ sinks: [{ type: 'webhook', url: 'http://x/', secret: 'a-shared-secret-of-16+' }] }, /https/],
    [{ sinks: [{ type: 'webhook', url: 'https://x/' }] }, /secret or secretFile/],
    [{ sinks: [{ type: 'webhook', url: 'https://x/', secret: 'short' }] }, /at least 16/],
    [
      { sinks: [{ type: 'webhook', url: 'https://x/', secret: 'a-shared-secret-of-16+', retry: { every: 1 } }] },
      /unknown key "every"/,
    ],
    [
      { sinks: [{ type: 'webhook', url: 'https://x/', secret: 'a-shared-secret-of-16+', caFile: '/nonexistent' }] },
      /caFile/,
    ],
    [{ sinks: [{ type: 'stdout' }, { type: 'stdout' }] }, /only one stdout/],
    [{ backlog: 0 }, /events\.backlog/],
    [{ maxEvents: 1000, backlog: 2000 }, /events\.backlog/],
  ];
  for (const [section, error] of bad)
    assert.throws(() => parseEventsConfig(section, '/d'), error, JSON.stringify(section));
});

test('a webhook secret file must be the owner’s alone', () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-sink-'));
  try {
    const file = join(dir, 'secret');
    writeFileSync(file, 'a-shared-secret-of-16+\n', { mode: 0o644 });
    const section = { sinks: [{ type: 'webhook', url: 'https://x/', secretFile: file }] };
    assert.throws(() => parseEventsConfig(section, dir), /0644.*0600/);
    chmodSync(file, 0o600);
    const sink = parseEventsConfig(section, dir).sinks[0]!;
    assert.equal(sink.type === 'webhook' && sink.secret, 'a-shared-secret-of-16+');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
