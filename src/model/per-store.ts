/**
 * Values kept per open store (its root executor), made on first use. Inside a transaction there is none: what a
 * transaction has not committed must never reach what other requests share.
 */
import type { Executor } from '../store/db.js';

export function perStore<T>(values: WeakMap<object, T>, db: Executor, make: () => T): T | undefined {
  if (db.isTransaction) return undefined;
  let v = values.get(db);
  if (v === undefined) values.set(db, (v = make()));
  return v;
}
