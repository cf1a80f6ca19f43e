/**
 * Back-pressure for writers. While the checkpointer restarts the write-ahead log (checkpointer.ts), new write
 * transactions wait here instead of appending to a log that is being emptied; reads are never held. Open is
 * the normal state, and then `wait()` returns nothing, so the hot path takes no promise.
 */
export class WriteGate {
  private waiters: (() => void)[] = [];
  private closed = false;
  /** Transactions that had to wait, since the store opened. */
  waits = 0;

  get isOpen(): boolean {
    return !this.closed;
  }

  close(): void {
    this.closed = true;
  }

  open(): void {
    this.closed = false;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Undefined while open; otherwise a promise settled when the gate opens again. */
  wait(): Promise<void> | undefined {
    if (!this.closed) return undefined;
    this.waits++;
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
