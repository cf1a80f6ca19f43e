/** Where a store's posture state lives: its runtime (a module of its own, so posture types load without the store). */
import type { Executor } from '../../store/db.js';
import { defineCache, storeState } from '../../store/runtime.js';
import { PostureState } from './state.js';

const POSTURE = defineCache('posture', () => new PostureState());

/** The posture state of the store `db` belongs to (a transaction's too). */
export const postureOf = (db: Executor): PostureState => storeState(db, POSTURE) ?? new PostureState();
