/**
 * The JSON-lines file sink of recorded events (`events.sinks`, type `file`): one event per line, appended and
 * flushed to disk before the delivery cursor moves (model/events/deliver.ts). The file and its rotated copies
 * are readable by the owner only (0600); past `maxSizeMiB` the file is rotated (`events.jsonl` →
 * `events.jsonl.1` → … → `events.jsonl.<maxFiles>`, the oldest dropped), so a log shipper tailing it by name
 * follows on.
 */
import { chmod, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { EventSink } from '../model/events/deliver.js';
import type { FileSinkConfig } from './events-config.js';

const sizeOf = (path: string): Promise<number> =>
  stat(path).then(
    (s) => s.size,
    () => 0,
  );

export class FileSink implements EventSink {
  readonly name: string;

  constructor(private readonly cfg: FileSinkConfig) {
    this.name = cfg.name;
  }

  accepts(namespace: string): boolean {
    return this.cfg.namespaces === undefined || this.cfg.namespaces.includes(namespace);
  }

  async write(events: readonly string[]): Promise<void> {
    const data = Buffer.from(events.map((e) => e + '\n').join(''));
    const { path } = this.cfg;
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const size = await sizeOf(path);
    if (size > 0 && size + data.length > this.cfg.maxBytes) await this.rotate();
    const file = await open(path, 'a', 0o600);
    try {
      // A file made by someone else with a wider mode is narrowed: events name who did what, from where.
      await chmod(path, 0o600);
      await file.writeFile(data);
      await file.sync();
    } finally {
      await file.close();
    }
  }

  private async rotate(): Promise<void> {
    const { path, maxFiles } = this.cfg;
    if (maxFiles === 0) return rm(path, { force: true });
    await rm(`${path}.${maxFiles}`, { force: true });
    for (let i = maxFiles - 1; i >= 1; i--) await rename(`${path}.${i}`, `${path}.${i + 1}`).catch(() => {});
    await rename(path, `${path}.1`);
  }
}
