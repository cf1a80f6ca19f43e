/**
 * The local sinks of recorded events (`events.sinks`, docs/events.md): a JSON-lines file, one event per line,
 * appended and flushed to disk before the delivery cursor moves (model/events/deliver.ts), and stdout, one event
 * per line for a container's log collector. The file and its rotated copies are readable by the owner only
 * (0600); past `maxSizeMiB`, or once it is `maxAge` old, the file is rotated (`events.jsonl` → `events.jsonl.1`
 * → … → `events.jsonl.<maxFiles>`, the oldest dropped), so a log shipper tailing it by name follows on.
 */
import { chmod, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { eventFilter, type EventSink } from '../model/events/deliver.js';
import type { FileSinkConfig, SinkConfig, StdoutSinkConfig } from './events-config.js';
import { WebhookSink } from './webhook-sink.js';

async function endsWithNewline(path: string, size: number): Promise<boolean> {
  const file = await open(path, 'r');
  try {
    const last = Buffer.alloc(1);
    await file.read(last, 0, 1, size - 1);
    return last[0] === 0x0a;
  } finally {
    await file.close();
  }
}

export class FileSink implements EventSink {
  readonly name: string;
  readonly accepts: (namespace: string, eventType: string) => boolean;
  /** When the current file was begun (undefined: not known yet; read from the file at the first write). */
  private startedAt: number | undefined;

  constructor(
    private readonly cfg: Omit<FileSinkConfig, 'backlog'>,
    private readonly now: () => number = Date.now,
  ) {
    this.name = cfg.name;
    this.accepts = eventFilter(cfg.namespaces, cfg.types);
  }

  async write(events: readonly string[]): Promise<void> {
    let data = Buffer.from(events.map((e) => e + '\n').join(''));
    const { path } = this.cfg;
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const st = await stat(path).catch(() => undefined);
    const size = st?.size ?? 0;
    // A line cut short by a crash mid-write (its batch is written again whole) is ended first, so it stays a
    // line of its own rather than spoiling the next event's.
    if (this.startedAt === undefined && size > 0 && !(await endsWithNewline(path, size)))
      data = Buffer.concat([Buffer.from('\n'), data]);
    // A file found at the start: its birth (or, where the file system keeps none, its last write) starts its age.
    if (st && this.startedAt === undefined) this.startedAt = st.birthtimeMs > 0 ? st.birthtimeMs : st.mtimeMs;
    const old = this.cfg.maxAgeMs !== undefined && this.now() - (this.startedAt ?? this.now()) >= this.cfg.maxAgeMs;
    if (size > 0 && (size + data.length > this.cfg.maxBytes || old)) await this.rotate();
    if (size === 0 || this.startedAt === undefined) this.startedAt = this.now();
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
    this.startedAt = this.now();
    if (maxFiles === 0) return rm(path, { force: true });
    await rm(`${path}.${maxFiles}`, { force: true });
    for (let i = maxFiles - 1; i >= 1; i--) await rename(`${path}.${i}`, `${path}.${i + 1}`).catch(() => {});
    await rename(path, `${path}.1`);
  }
}

/**
 * Events on the controller's standard output, one JSON object a line (beside its log lines, which have `level`
 * and `msg`; an event has `namespace`). Delivered once written to the stream; with several controllers only the
 * one running the periodic work prints them.
 */
export class StdoutSink implements EventSink {
  readonly name: string;
  readonly accepts: (namespace: string, eventType: string) => boolean;

  constructor(
    cfg: Omit<StdoutSinkConfig, 'backlog'>,
    private readonly out: NodeJS.WritableStream = process.stdout,
  ) {
    this.name = cfg.name;
    this.accepts = eventFilter(cfg.namespaces, cfg.types);
  }

  write(events: readonly string[]): Promise<void> {
    const text = events.map((e) => e + '\n').join('');
    return new Promise((resolve, reject) => {
      this.out.write(text, (err) => (err ? reject(err) : resolve()));
    });
  }
}

/** The sink a config entry describes. */
export function sinkOf(cfg: SinkConfig, stdout?: NodeJS.WritableStream): EventSink & { close?(): void } {
  switch (cfg.type) {
    case 'file':
      return new FileSink(cfg);
    case 'stdout':
      return new StdoutSink(cfg, stdout);
    case 'webhook':
      return new WebhookSink(cfg);
  }
}
