/**
 * Counts the frames a connection appends to its write-ahead log, from the log's index (the `-shm` file): its
 * header holds how many frames the log has (`mxFrame`) and the salts of the log's generation, which change
 * each time the log starts over from its first frame (a writer does that at the start of a transaction once a
 * checkpoint has copied everything; a TRUNCATE checkpoint does it too). Read by the one writing connection
 * between its own transactions, the difference is exact: no one else appends, and a log that started over
 * since the last look holds only frames written since. (Counted from the checkpointer's passes instead, in
 * another thread, a pass could see the log's frame count of one generation and the header of the next, and
 * count a generation twice, or miss frames when the log started over twice between passes; in the runs
 * compared the two counts agreed within a few per cent.)
 * The layout (the index header, two copies, in native byte order): sqlite.org/walformat.html, "The WAL-Index
 * Header".
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';

const HEADER = 48;

export class WalFrameCounter {
  private fd: number | undefined;
  private readonly buf = Buffer.alloc(2 * HEADER);
  private salt: string | undefined;
  private frames = 0;
  /** Frames appended since the counter started. */
  appended = 0;

  constructor(private readonly shmFile: string) {}

  /** Looks at the index now: call it only while none of the connection's transactions is open. */
  sample(): void {
    if (this.fd === undefined) {
      try {
        this.fd = openSync(this.shmFile, 'r');
      } catch {
        return;
      }
    }
    if (readSync(this.fd, this.buf, 0, 2 * HEADER, 0) < 2 * HEADER) return;
    // Both copies agree unless the index is being rewritten right now: then look again next time.
    if (this.buf.compare(this.buf, 0, HEADER, HEADER, 2 * HEADER) !== 0) return;
    const le = endianness() === 'LE';
    const mxFrame = le ? this.buf.readUInt32LE(16) : this.buf.readUInt32BE(16);
    const salt = this.buf.toString('hex', 32, 40);
    // The first look only says where the log stands: what was written before the counter started is not counted.
    if (this.salt !== undefined) this.appended += salt === this.salt ? Math.max(0, mxFrame - this.frames) : mxFrame;
    this.salt = salt;
    this.frames = mxFrame;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
