/**
 * An event's stored text (src/store/event-text.ts): every event reads back byte for byte as the text it was
 * built as, whatever its values hold; the pieces are version 1 of the stored form and never change meaning
 * (a text stored by this version reads the same in every later one); a text without control characters (stored
 * before) is read as it is; an identity create's event is stored in a fraction of its bytes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { storedEvent, type EventRecord } from '../../../src/model/events/event.js';
import { entityChangeEvent } from '../../../src/model/events/entity-change.js';
import { authenticationEvent } from '../../../src/model/events/auth-events.js';
import { controllerEvent } from '../../../src/model/events/system-events.js';
import { edgeRouters, identities, services } from '../../../src/model/resources/index.js';
import { storedText, wholeText, type EventColumns } from '../../../src/store/event-text.js';
import { eventParams, wholeBody } from '../../../src/store/events.js';
import type { StoredEvent } from '../../../src/store/events.js';
import type { Ctx, EventActor } from '../../../src/model/ctx.js';

const now = new Date('2026-11-29T11:17:53.572Z');
const at = now.toISOString();
const admin: EventActor = {
  author: { type: 'identity', id: 'VcMLaZ2wFQsG3qtU', name: 'Default Admin', apiSessionId: 'VcMLacIpojf3KpKE' },
  source: { type: 'rest', api: 'management', auth: 'edge', remoteAddr: '127.0.0.1', method: 'POST' },
};
const ctxOf = (actor?: EventActor) => ({ now: () => now, actor }) as unknown as Ctx;

/** An identity as a create through the Management API records it. */
const identity = {
  id: 'VcMNg7YQJ9xdhKth',
  createdAt: at,
  updatedAt: at,
  tags: {},
  isSystem: false,
  name: 'id-432027',
  typeId: 'User',
  isAdmin: false,
  isDefaultAdmin: false,
  authPolicyId: 'default',
  externalId: null,
  roleAttributes: ['attr1', 'attr3'],
  defaultHostingCost: 0,
  defaultHostingPrecedence: 'default',
  serviceHostingCosts: {},
  serviceHostingPrecedences: {},
  appData: {},
  envInfo: {},
  sdkInfo: {},
  disabledAt: null,
  disabledUntil: null,
};

/** The outbox row's stored text, and the text read back from it. */
function roundTrip(e: StoredEvent): { stored: string; read: string } {
  const stored = eventParams(e)[7] as string;
  return { stored, read: wholeBody({ ...e, body: stored }) };
}

const events = (): [string, EventRecord][] => [
  ['identity create', entityChangeEvent(ctxOf(admin), identities, identity.id, 'created', undefined, identity)],
  [
    'identity update',
    entityChangeEvent(ctxOf(admin), identities, identity.id, 'updated', identity, {
      ...identity,
      updatedAt: '2026-11-29T11:18:00.000Z',
      roleAttributes: ['x'],
      appData: { k: '"quoted" \\ \u0001 \n' },
    }),
  ],
  [
    'service create by the controller',
    entityChangeEvent(ctxOf(), services, 's1', 'created', undefined, {
      id: 's1',
      createdAt: at,
      updatedAt: at,
      tags: {},
      isSystem: false,
      name: 'svc',
      encryptionRequired: true,
      terminatorStrategy: 'smartrouting',
      roleAttributes: [],
      configs: [],
    }),
  ],
  [
    'router delete',
    entityChangeEvent(
      ctxOf(admin),
      edgeRouters,
      'r1',
      'deleted',
      { id: 'r1', createdAt: at, updatedAt: at, name: 'er', cost: 0, isTunnelerEnabled: false },
      undefined,
    ),
  ],
  [
    'authentication',
    authenticationEvent({
      eventType: 'success',
      method: 'password',
      identityId: 'i1',
      authenticatorId: 'a1',
      remoteAddress: '127.0.0.1',
    }),
  ],
  ['controller', controllerEvent('started', { version: 'v0.1.0' })],
];

test('every kind of event reads back byte for byte as built', () => {
  for (const [what, e] of events()) {
    const whole = storedEvent(now, e);
    const { stored, read } = roundTrip(whole);
    assert.equal(read, whole.body, what);
    assert.ok(stored.length <= whole.body.length, what);
  }
});

test("an identity create's event is stored in a fraction of its bytes", () => {
  const whole = storedEvent(now, events()[0]![1]);
  const { stored } = roundTrip(whole);
  assert.ok(whole.body.length > 850, `the whole text: ${whole.body.length} bytes`);
  assert.ok(stored.length < 130, `stored: ${stored.length} bytes: ${JSON.stringify(stored)}`);
});

test('values that repeat or contain pieces, quotes, control characters or nothing read back exactly', () => {
  const pieces = [
    '',
    '"',
    '\\',
    '\u0001',
    '\u0002x',
    at,
    'VcMNg7YQJ9xdhKth',
    ',"createdAt":',
    '"isSystem":false',
    'identities',
    'a"b',
    '\ud800',
    'entityChange',
  ];
  const pick = (n: number) => pieces[n % pieces.length]!;
  let checked = 0;
  for (let i = 0; i < pieces.length; i++)
    for (let j = 0; j < pieces.length; j++) {
      const columns: EventColumns = {
        id: pick(i + j),
        namespace: i % 2 ? 'entityChange' : 'session',
        eventType: pick(j),
        timestamp: pick(i),
        actorId: i % 3 ? pick(i * 7 + j) : null,
        entityType: pick(j * 5 + 1),
        entityId: j % 4 ? pick(i + 3 * j) : null,
      };
      const fields: Record<string, unknown> = { [pick(i)]: pick(j), list: [pick(i + 1), pick(j + 2), columns] };
      const e = storedEvent(now, {
        namespace: columns.namespace as EventRecord['namespace'],
        eventType: columns.eventType,
        typeField: i % 2 ? 'eventType' : 'event_type',
        fields,
      });
      const row = { ...columns, id: e.id, timestamp: e.timestamp };
      for (const text of [e.body, JSON.stringify(fields), JSON.stringify(columns)]) {
        assert.equal(wholeText(row, storedText(row, text)), text, JSON.stringify({ row, text }));
        checked++;
      }
    }
  assert.ok(checked > 400);
});

test('a text stored in version 1 of the form reads the same (the pieces never change meaning)', () => {
  const row: EventColumns = {
    id: '01a22706-9924-75e7-9a60-f5502364b85d',
    namespace: 'entityChange',
    eventType: 'created',
    timestamp: at,
    actorId: 'VcMLaZ2wFQsG3qtU',
    entityType: 'identities',
    entityId: 'VcMNg7YQJ9xdhKth',
  };
  const stored =
    '\x01\x06\x04,"name":"Default Admin"\x07"VcMLacIpojf3KpKE"\x08"127.0.0.1"\x0b\x05\x0c\x03\x0e\x03\x0f\x02\x10\x02' +
    '\x11"id-432027"\x12"User"\x13["attr1","attr3"]\x14}' +
    '\x15\x16\x17\x18';
  assert.equal(
    wholeText(row, stored),
    '{"id":"01a22706-9924-75e7-9a60-f5502364b85d","namespace":"entityChange","version":1,' +
      '"timestamp":"2026-11-29T11:17:53.572Z","eventType":"created","metadata":{"author":{"type":"identity",' +
      '"id":"VcMLaZ2wFQsG3qtU","name":"Default Admin","apiSessionId":"VcMLacIpojf3KpKE"},"source":{"type":"rest",' +
      '"api":"management","auth":"edge","remoteAddr":"127.0.0.1","method":"POST"}},"entityType":"identities",' +
      '"entityId":"VcMNg7YQJ9xdhKth","initialState":null,"finalState":{"id":"VcMNg7YQJ9xdhKth",' +
      '"createdAt":"2026-11-29T11:17:53.572Z","updatedAt":"2026-11-29T11:17:53.572Z","tags":{},"isSystem":false,' +
      '"name":"id-432027","typeId":"User","isAdmin":false,"isDefaultAdmin":false,"authPolicyId":"default",' +
      '"externalId":null,"roleAttributes":["attr1","attr3"],"defaultHostingCost":0,' +
      '"defaultHostingPrecedence":"default","serviceHostingCosts":{},"serviceHostingPrecedences":{},"appData":{},' +
      '"envInfo":{},"sdkInfo":{},"disabledAt":null,"disabledUntil":null}}}' +
      ',"encryptionRequired":true,"terminatorStrategy":"smartrouting","roleAttributes":' +
      ',"configs":[]}}' +
      ',"cost":0,"noTraversal":false,"isVerified":false,"fingerprint":null,"unverifiedFingerprint":null,' +
      '"unverifiedCertPem":null,"isTunnelerEnabled":' +
      ',"appData":{},"certPem":null}}',
  );
  assert.throws(() => wholeText(row, '{\x1f}'), /unknown piece/);
});

test('a text without control characters (stored whole, before) is read as it is', () => {
  const row: EventColumns = {
    id: 'x',
    namespace: 'entityChange',
    eventType: 'created',
    timestamp: at,
    actorId: null,
    entityType: 'identities',
    entityId: 'i',
  };
  const whole = `{"id":"x","namespace":"entityChange","version":1,"timestamp":"${at}","eventType":"created","entityId":"i"}`;
  assert.equal(wholeText(row, whole), whole);
  assert.equal(wholeBody({ ...row, body: whole }), whole);
});
