/**
 * The data-dir lock: live holders refuse, stale locks are taken over, a stale lock is only broken once, and a
 * holder whose lock file was deleted still refuses through its hold on the store.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { acquireLock, breakStaleLock, lockHolder, look, LOCK_FILE } from '../../../src/store/lock.js';

const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

const storeOf = (dir: string) => join(dir, 'edgectl.db');

/** A WAL store with one table, as a controller leaves it. */
function makeStore(dir: string): void {
  const db = new Database(storeOf(dir));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (x)');
  db.close();
}

function withDir(fn: (dir: string, lock: string) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-lock-'));
  try {
    fn(dir, join(dir, LOCK_FILE));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a lock held by another live process refuses; a stale one is taken over and released', () =>
  withDir((dir, lock) => {
    writeFileSync(lock, `${process.ppid} other`);
    assert.throws(() => acquireLock(dir, storeOf(dir)), new RegExp(`in use by process ${process.ppid}`));
    assert.equal(lockHolder(dir), process.ppid);
    writeFileSync(lock, `${deadPid()} stale`);
    assert.equal(lockHolder(dir), undefined);
    const release = acquireLock(dir, storeOf(dir));
    assert.equal(lockHolder(dir), process.pid);
    assert.throws(
      () => acquireLock(dir, storeOf(dir)),
      /in use by process/,
      'a second lock in the same process is refused',
    );
    release();
    assert.ok(!existsSync(lock));
  }));

test('a stale lock replaced by a fresh one after it was judged stale is not removed', () =>
  withDir((_dir, lock) => {
    writeFileSync(lock, `${deadPid()} stale`);
    const seen = look(lock)!;
    // Meanwhile another starter breaks the stale lock and takes its own.
    unlinkSync(lock);
    writeFileSync(lock, `${process.ppid} fresh`);
    assert.equal(breakStaleLock(lock, seen), true);
    assert.equal(readFileSync(lock, 'utf8'), `${process.ppid} fresh`, 'the fresh lock survives');
  }));

test('while another starter holds the breaker, a stale lock is left alone', () =>
  withDir((_dir, lock) => {
    writeFileSync(lock, `${deadPid()} stale`);
    writeFileSync(`${lock}.break`, '1');
    assert.equal(breakStaleLock(lock, look(lock)!), false);
    assert.ok(existsSync(lock));
  }));

test('with its lock file deleted, a holder still refuses a second lock; released, the store is free again', () =>
  withDir((dir, lock) => {
    makeStore(dir);
    const release = acquireLock(dir, storeOf(dir));
    unlinkSync(lock);
    const pid = process.platform === 'linux' ? `process ${process.pid}` : 'another process';
    assert.throws(
      () => acquireLock(dir, storeOf(dir)),
      new RegExp(`in use by ${pid} \\(its store is open there; ${LOCK_FILE} was gone\\)`),
    );
    assert.ok(!existsSync(lock), 'the refused starter leaves no lock file behind');
    release();
    acquireLock(dir, storeOf(dir))();
  }));

test('a store another connection has open refuses the lock, and a store that is not a database does not', () =>
  withDir((dir, lock) => {
    makeStore(dir);
    const other = new Database(storeOf(dir));
    other.prepare('SELECT count(*) FROM t').get();
    try {
      assert.throws(() => acquireLock(dir, storeOf(dir)), /in use by .*its store is open there/);
      assert.ok(!existsSync(lock));
    } finally {
      other.close();
    }
    writeFileSync(storeOf(dir), 'not a database');
    acquireLock(dir, storeOf(dir))();
  }));
