/**
 * Provisioning writes: for each kind of create, `connections` clients create new entities through the
 * Management API for `seconds`, and the controller's `/metrics` tells how many bytes went to the
 * write-ahead log (`edgectl_store_wal_written_bytes_total`). Reported per create, beside the creates a second
 * and the log's largest size seen on disk (sampled every 20 ms), so write amplification and the log's bound
 * are measured where a provisioning script would meet them, with the creates per commit (group commit: the
 * pages every create of a commit shares are written once for all of them). On PostgreSQL the log is the
 * server's, with no file of the bench's to watch: the records that touch the bench's database are counted
 * (bench/postgres.ts, `databaseWal`). Where each create's bytes go: bench/wal-pages.ts.
 */
import { statSync } from 'node:fs';

export interface WriteKind {
  key: string;
  path: string;
  body(n: number): Record<string, unknown>;
}

export interface WriteResult {
  kind: string;
  connections: number;
  creates: number;
  errors: number;
  perSecond: number;
  walBytesPerCreate: number;
  walPeakMiB: number;
  /** Creates per commit (SQLite's group commit), when the controller reports its commits. */
  perCommit?: number;
  /** How many replicas the creates were spread over (`--replicas`). */
  replicas?: number;
}

type Post = (path: string, body: Record<string, unknown>) => Promise<number>;

/** The kinds a provisioning run creates, with the model's attribute spread (`attrs(n)`). */
export function writeKinds(attrs: (n: number) => string[], tag: string): WriteKind[] {
  return [
    {
      key: 'identity',
      path: '/identities',
      body: (n) => ({ name: `${tag}-id-${n}`, type: 'Device', isAdmin: false, roleAttributes: attrs(n) }),
    },
    {
      key: 'service',
      path: '/services',
      body: (n) => ({ name: `${tag}-svc-${n}`, encryptionRequired: true, roleAttributes: attrs(n) }),
    },
    {
      key: 'service policy',
      path: '/service-policies',
      body: (n) => ({
        name: `${tag}-sp-${n}`,
        type: n % 2 ? 'Bind' : 'Dial',
        semantic: 'AnyOf',
        identityRoles: [`#${attrs(n)[0]}`],
        serviceRoles: [`#${attrs(n + 7)[0]}`],
      }),
    },
    {
      key: 'edge router',
      path: '/edge-routers',
      body: (n) => ({ name: `${tag}-er-${n}`, roleAttributes: attrs(n), isTunnelerEnabled: false }),
    },
  ];
}

export async function measureWrites(opts: {
  kinds: WriteKind[];
  connections: number;
  seconds: number;
  /**
   * Seconds of the same creates before each kind's measured window, not counted: the load scenarios' warm-up,
   * so the window is the controller's steady state (its statements prepared, its code optimised).
   */
  warmup?: number;
  post: Post;
  /** Bytes written to the write-ahead log so far (`walFromMetrics`, or PostgreSQL's WAL position). */
  walWritten(): Promise<number>;
  /** The log's size on disk now (`walFileSize`), when it has a file of its own. */
  walSize?(): number;
  /** Commits of write transactions so far (`edgectl_store_commits_total`). */
  commits?(): Promise<number>;
}): Promise<WriteResult[]> {
  const written = opts.walWritten;
  const walSize = opts.walSize;
  const out: WriteResult[] = [];
  let serial = 0;
  const load = (kind: WriteKind, seconds: number, counted: (status: number) => void) => {
    const end = performance.now() + seconds * 1000;
    return Promise.all(
      Array.from({ length: opts.connections }, async () => {
        while (performance.now() < end) counted(await opts.post(kind.path, kind.body(serial++)).catch(() => 0));
      }),
    );
  };
  for (const kind of opts.kinds) {
    if (opts.warmup) await load(kind, opts.warmup, () => {});
    // Let the checkpointer see the previous writes (the warm-up's, the previous kind's), so they are not counted here.
    await new Promise((r) => setTimeout(r, 1000));
    const before = await written();
    const commitsBefore = await opts.commits?.();
    let peak = walSize ? 0 : NaN;
    const sampler = walSize && setInterval(() => (peak = Math.max(peak, walSize())), 20);
    let creates = 0;
    let errors = 0;
    const t0 = performance.now();
    await load(kind, opts.seconds, (status) => (status === 201 ? creates++ : errors++));
    const elapsed = (performance.now() - t0) / 1000;
    // The last pass of the checkpointer (every 250 ms) counts the final frames.
    await new Promise((r) => setTimeout(r, 1000));
    clearInterval(sampler);
    const bytes = (await written()) - before;
    const commits = commitsBefore === undefined ? undefined : (await opts.commits!()) - commitsBefore;
    out.push({
      kind: kind.key,
      connections: opts.connections,
      creates,
      errors,
      perSecond: creates / elapsed,
      walBytesPerCreate: creates > 0 ? bytes / creates : NaN,
      walPeakMiB: peak / 1024 / 1024,
      ...(commits && { perCommit: creates / commits }),
    });
  }
  return out;
}

/** A counter a controller reports on `/metrics`. */
export function fromMetrics(metrics: () => Promise<string>, name: string): () => Promise<number> {
  return async () => {
    const line = (await metrics()).split('\n').find((l) => l.startsWith(`${name} `));
    if (!line) throw new Error(`the controller does not report ${name}`);
    return Number(line.split(' ')[1]);
  };
}

/** The WAL bytes a SQLite controller reports on `/metrics` (`edgectl_store_wal_written_bytes_total`). */
export const walFromMetrics = (metrics: () => Promise<string>) =>
  fromMetrics(metrics, 'edgectl_store_wal_written_bytes_total');

/** The size of a SQLite write-ahead log file (0 while there is none). */
export function walFileSize(file: string): () => number {
  return () => {
    try {
      return statSync(file).size;
    } catch {
      return 0;
    }
  };
}
