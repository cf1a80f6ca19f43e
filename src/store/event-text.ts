/**
 * An event's text as the outbox stores it. Most of an event's bytes repeat what its row's columns hold (its id,
 * time, entity and actor, each written two or three times) or the same field names and defaults in every event
 * of a kind: an identity create's `entityChange` event is ~900 bytes of JSON, and a million of them were half
 * the xlarge model's store. Stored, each such piece is one control character: JSON text never holds one (every
 * control character inside a JSON string is escaped), so the stored text says unambiguously where each piece
 * goes, and {@link wholeText} rebuilds the event byte for byte. A text without control characters is whole
 * already (every event stored before this form, and those nothing here shortens).
 *
 * The pieces are version 1 of the stored form: rows keep them for as long as they are kept, so an entry's
 * meaning never changes and a new piece takes a character still free (`test/unit/store/event-text.test.ts`
 * pins them). Tab, line feed and carriage return are left out, so a stored text stays readable in a terminal.
 */

import type { EventsTable } from './schema.js';

/** The columns of an outbox row the stored text refers to. */
export type EventColumns = Omit<EventsTable, 'seq' | 'body'>;

/** The common fields every event starts with, as storedEvent (model/events/event.ts) writes them. */
const commonFields = (c: EventColumns): string =>
  `{"id":"${c.id}","namespace":"${c.namespace}","version":1,"timestamp":"${c.timestamp}",` +
  `"${c.namespace === 'entityChange' ? 'eventType' : 'event_type'}":"${c.eventType}",`;

/** The pieces taken from the row: 1, the common fields (only at the start); 2-5, a column's value quoted. */
const COMMON = '\x01';
const TIMESTAMP = '\x02';
const ENTITY_ID = '\x03';
const ACTOR_ID = '\x04';
const ENTITY_TYPE = '\x05';

/** The fixed pieces, from character 6 on (tab, line feed and carriage return skipped). Never change one. */
const FIXED: readonly (readonly [string, string])[] = Object.freeze([
  ['\x06', ',"metadata":{"author":{"type":"identity","id":'],
  ['\x07', ',"apiSessionId":'],
  ['\x08', '},"source":{"type":"rest","api":"management","auth":"edge","remoteAddr":'],
  ['\x0b', ',"method":"POST"}},"entityType":'],
  ['\x0c', ',"entityId":'],
  ['\x0e', ',"initialState":null,"finalState":{"id":'],
  ['\x0f', ',"createdAt":'],
  ['\x10', ',"updatedAt":'],
  ['\x11', ',"tags":{},"isSystem":false,"name":'],
  ['\x12', ',"typeId":'],
  ['\x13', ',"isAdmin":false,"isDefaultAdmin":false,"authPolicyId":"default","externalId":null,"roleAttributes":'],
  [
    '\x14',
    ',"defaultHostingCost":0,"defaultHostingPrecedence":"default","serviceHostingCosts":{},' +
      '"serviceHostingPrecedences":{},"appData":{},"envInfo":{},"sdkInfo":{},"disabledAt":null,"disabledUntil":null}}',
  ],
  ['\x15', ',"encryptionRequired":true,"terminatorStrategy":"smartrouting","roleAttributes":'],
  ['\x16', ',"configs":[]}}'],
  [
    '\x17',
    ',"cost":0,"noTraversal":false,"isVerified":false,"fingerprint":null,"unverifiedFingerprint":null,' +
      '"unverifiedCertPem":null,"isTunnelerEnabled":',
  ],
  ['\x18', ',"appData":{},"certPem":null}}'],
]);

/** Each fixed piece by its character's code. */
const FIXED_BY_CODE: readonly string[] = Object.freeze(
  FIXED.reduce<string[]>((out, [c, text]) => ((out[c.charCodeAt(0)] = text), out), []),
);

/** The columns whose values a stored text may hold as a piece. */
type ValueColumn = 'timestamp' | 'entityId' | 'actorId' | 'entityType';

/** A step of the writer's walk: a fixed piece, or a column's value quoted. */
type Step = { char: string; text: string; column?: undefined } | { char: string; column: ValueColumn };

const fixed = (char: string): Step => ({ char, text: FIXED_BY_CODE[char.charCodeAt(0)]! });
const value = (char: string, column: ValueColumn): Step => ({ char, column });

/**
 * The pieces the writer looks for, in the order an `entityChange` event holds them (a value as often as it
 * recurs): each is looked for from where the last one found ended, and one not found is passed over. The order
 * only decides how much is shortened, never what is read back (every piece found is replaced where it was
 * found), so it may change freely; the characters may not.
 */
const WALK: readonly Step[] = Object.freeze([
  fixed('\x06'),
  value(ACTOR_ID, 'actorId'),
  fixed('\x07'),
  fixed('\x08'),
  fixed('\x0b'),
  value(ENTITY_TYPE, 'entityType'),
  fixed('\x0c'),
  value(ENTITY_ID, 'entityId'),
  fixed('\x0e'),
  value(ENTITY_ID, 'entityId'),
  fixed('\x0f'),
  value(TIMESTAMP, 'timestamp'),
  fixed('\x10'),
  value(TIMESTAMP, 'timestamp'),
  ...['\x11', '\x12', '\x13', '\x14', '\x15', '\x16', '\x17', '\x18'].map(fixed),
]);

const CONTROL = /[\x01-\x1f]/;
const CONTROLS = /[\x01-\x1f]/g;

/**
 * The text to store for an event whose whole JSON text (as storedEvent writes it, with no control character
 * outside its escapes) is `text`: one pass, each piece found replaced by its character.
 */
export function storedText(c: EventColumns, text: string): string {
  const common = commonFields(c);
  let out = '';
  let pos = 0;
  if (text.startsWith(common)) {
    out = COMMON;
    pos = common.length - 1;
  }
  for (const step of WALK) {
    let find: string;
    if (step.column === undefined) find = step.text;
    else {
      const v = c[step.column];
      if (v === null) continue;
      find = `"${v}"`;
    }
    const at = text.indexOf(find, pos);
    if (at < 0) continue;
    out += text.slice(pos, at) + step.char;
    pos = at + find.length;
  }
  return out + text.slice(pos);
}

/** The event's whole JSON text from its stored text and row. */
export function wholeText(c: EventColumns, stored: string): string {
  if (!CONTROL.test(stored)) return stored;
  return stored.replace(CONTROLS, (ch) => {
    switch (ch) {
      case COMMON:
        return commonFields(c).slice(0, -1);
      case TIMESTAMP:
        return `"${c.timestamp}"`;
      case ENTITY_ID:
        return `"${c.entityId}"`;
      case ACTOR_ID:
        return `"${c.actorId}"`;
      case ENTITY_TYPE:
        return `"${c.entityType}"`;
    }
    const piece = FIXED_BY_CODE[ch.charCodeAt(0)];
    if (piece === undefined) throw new Error(`an event's stored text holds an unknown piece (${ch.charCodeAt(0)})`);
    return piece;
  });
}
