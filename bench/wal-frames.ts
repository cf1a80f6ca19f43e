/**
 * Reads a SQLite write-ahead log file's frames: the page each frame holds and whether it ends a commit. Only the
 * frames of the log's current generation count (their salts are the header's; a log that started over keeps the
 * older generation's frames after its end until they are overwritten). The format: sqlite.org/fileformat.html,
 * "The WAL file format" (a 32-byte header, then frames of a 24-byte header and one page).
 */
import { closeSync, openSync, readSync } from 'node:fs';

export interface WalFrame {
  page: number;
  /** The frame ends a transaction (its header holds the database size after the commit). */
  commit: boolean;
}

export interface WalFrames {
  pageSize: number;
  /** Bytes a frame takes in the log: its header and one page. */
  frameBytes: number;
  /** Identifies the log's generation (it changes when the log starts over). */
  salt: string;
  frames: WalFrame[];
}

/** The log's current frames (none while the file is missing or empty). */
export function readWalFrames(walFile: string): WalFrames {
  let fd: number;
  try {
    fd = openSync(walFile, 'r');
  } catch {
    return { pageSize: 0, frameBytes: 0, salt: '', frames: [] };
  }
  try {
    const header = Buffer.alloc(32);
    if (readSync(fd, header, 0, 32, 0) < 32) return { pageSize: 0, frameBytes: 0, salt: '', frames: [] };
    const raw = header.readUInt32BE(8);
    const pageSize = raw === 1 ? 65536 : raw;
    const salt1 = header.readUInt32BE(16);
    const salt2 = header.readUInt32BE(20);
    const frameBytes = 24 + pageSize;
    const frames: WalFrame[] = [];
    const fh = Buffer.alloc(24);
    for (let at = 32; readSync(fd, fh, 0, 24, at) === 24; at += frameBytes) {
      if (fh.readUInt32BE(8) !== salt1 || fh.readUInt32BE(12) !== salt2) break;
      frames.push({ page: fh.readUInt32BE(0), commit: fh.readUInt32BE(4) !== 0 });
    }
    return { pageSize, frameBytes, salt: `${salt1}:${salt2}`, frames };
  } finally {
    closeSync(fd);
  }
}
