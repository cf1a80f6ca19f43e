/**
 * The encoded answers of repeated session creates. A client asking again for the same (API session, service,
 * type) gets the same record: same row, same token, same service name and, until a policy or router changes,
 * the same edge routers. The checks (access, posture, routers) still run on every request; only rendering,
 * the token's derivation and the JSON encoding are skipped when nothing the answer was made of changed.
 *
 * Validity is by identity, not by generation: the access engine hands out the same row and the same router
 * list until something they derive from changes, and a recomputed entry is a new object. So an answer is
 * reused exactly when every part it was made of is the very object it was made from.
 */
import type { Executor } from '../../../store/db.js';
import type { StoredSession } from '../../../store/sessions.js';
import type { JsonText } from '../../json-text.js';
import { defineCache, storeCache } from '../../../store/runtime.js';
import { WeighedMap } from '../../../store/weighed-map.js';

interface Answer {
  row: StoredSession;
  serviceName: string;
  edgeRouters: readonly unknown[];
  json: JsonText;
}

/** Kept per store, bounded by the encoded size (oldest out): a few thousand recent answers. */
const MAX_BYTES = 16 * 1024 * 1024;

class AnswerCache {
  private readonly answers = new WeighedMap<Answer>(Number.MAX_SAFE_INTEGER, MAX_BYTES);

  get(key: string, row: StoredSession, serviceName: string, edgeRouters: readonly unknown[]): JsonText | undefined {
    const a = this.answers.get(key);
    // The router list is the same array while the engine's router entries are unchanged (session-routers.ts).
    if (!a || a.row !== row || a.serviceName !== serviceName || a.edgeRouters !== edgeRouters) return;
    return a.json;
  }

  set(key: string, answer: Answer): void {
    this.answers.set(key, answer, answer.json.text.length);
  }
}

const SESSION_ANSWERS = defineCache('session-answers', () => new AnswerCache());

/** The cache of the store behind `db`; none inside a transaction (uncommitted rows are never shared). */
export const sessionAnswers = (db: Executor): AnswerCache | undefined => storeCache(db, SESSION_ANSWERS);
