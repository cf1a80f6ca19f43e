/**
 * An identity create's statements run directly on a copy of a kept model's database (no controller), in commits
 * of 16 members each in its own savepoint as the group commit runs them, with the CPU of each kind of statement
 * per create; VARIANT drops a trigger or indexes first (`nofts`: the name index's insert trigger, `nomarker`: the
 * role attributes' marker trigger, `noevidx`: the outbox's secondary indexes) to see what each costs.
 * Usage: node --import tsx bench/sqlite-create-parts.ts MODEL_DIR [base|nofts|nomarker|noevidx] [CREATES]
 */
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { attributesOf } from './model.js';

const src = process.argv[2]!;
const variant = process.argv[3] ?? 'base';
const N = Number(process.argv[4] ?? 4000);
const dir = mkdtempSync(join(tmpdir(), 'idc-parts-'));
copyFileSync(join(src, 'edgectl.db'), join(dir, 'x.db'));
if (existsSync(join(src, 'edgectl.db-wal'))) copyFileSync(join(src, 'edgectl.db-wal'), join(dir, 'x.db-wal'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const db = new Database(join(dir, 'x.db'));
db.pragma('journal_mode = wal');
db.pragma('synchronous = normal');
const drops: Record<string, string> = {
  base: '',
  nofts: 'drop trigger identities_name_search_insert',
  nomarker: 'drop trigger access_identity_identities_roleAttributes_insert',
  noevidx: 'drop index events_by_entity; drop index events_by_timestamp',
};
if (drops[variant]) db.exec(drops[variant]!);
const body = JSON.stringify({ pad: 'x'.repeat(900) });
const idCols = [
  'id',
  'createdAt',
  'updatedAt',
  'tags',
  'name',
  'typeId',
  'isAdmin',
  'isDefaultAdmin',
  'authPolicyId',
  'externalId',
  'defaultHostingCost',
  'defaultHostingPrecedence',
  'serviceHostingCosts',
  'serviceHostingPrecedences',
  'appData',
  'envInfo',
  'sdkInfo',
];
const insId = db.prepare(
  `insert into identities (${idCols.map((c) => `"${c}"`).join(',')}) values (${idCols.map(() => '?').join(',')})`,
);
const insAttr = [1, 2, 3, 4].map((n) =>
  db.prepare(
    `insert into "identities_roleAttributes" ("ownerId","value","position") values ${Array(n).fill('(?,?,?)').join(',')}`,
  ),
);
const insEv = db.prepare(
  'insert into events (id, namespace, "eventType", timestamp, "actorId", "entityType", "entityId", body) values (?,?,?,?,?,?,?,?)',
);
const sel = db.prepare('select * from identities where id = ?');
const selA = db.prepare('select value from "identities_roleAttributes" where "ownerId" = ? order by position');
const mk = db.prepare('select name, gen, "changedAt" from access_markers');
const t: Record<string, number> = {};
const time = (k: string, f: () => unknown) => {
  const a = process.cpuUsage();
  f();
  const b = process.cpuUsage(a);
  t[k] = (t[k] ?? 0) + b.user + b.system;
};
let n = 0;
const tag = randomUUID().slice(0, 8);
for (let b = 0; b < N / 16; b++) {
  time('begin', () => db.exec('begin'));
  for (let m = 0; m < 16; m++, n++) {
    const id = `${Date.now().toString(36)}${tag}${n}`;
    const now = new Date().toISOString();
    time('savepoint', () => db.exec('savepoint tx_member'));
    time('markers', () => mk.all());
    time('identity insert', () =>
      insId.run(
        id,
        now,
        now,
        '{}',
        `${tag}-id-${n}`,
        'Device',
        0,
        0,
        'default',
        null,
        0,
        'default',
        '{}',
        '{}',
        '{}',
        '{}',
        '{}',
      ),
    );
    const attrs = [...new Set(attributesOf(n))];
    if (attrs.length) time('attrs insert', () => insAttr[attrs.length - 1]!.run(attrs.flatMap((v, i) => [id, v, i])));
    time('markers', () => mk.all());
    time('re-read', () => {
      sel.get(id);
      selA.all(id);
    });
    time('event insert', () =>
      insEv.run(randomUUID(), 'entityChange', 'created', now, 'admin', 'identities', id, body),
    );
    time('release', () => db.exec('release tx_member'));
  }
  time('commit', () => db.exec('commit'));
}
let total = 0;
for (const v of Object.values(t)) total += v;
console.log(
  `${variant}: ${(total / N).toFixed(1)} µs/create ` +
    Object.entries(t)
      .map(([k, v]) => `${k} ${(v / N).toFixed(1)}`)
      .join(', '),
);
