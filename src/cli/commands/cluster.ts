/**
 * `edgectl cluster`: a local cluster for trying and testing several controllers over one PostgreSQL database.
 * It starts N `edgectl serve` processes on consecutive ports, each with its own data dir under `--dir`, the
 * first one creating the network (PKI, token key, default admin) and the others starting from copies of its
 * PKI and token key; it prints where each listens once all are ready, passes SIGINT/SIGTERM on to them and
 * exits when they have stopped. Each replica's log goes to `serve.log` in its data dir. Production clusters
 * run `edgectl serve --db …` under their own supervisor instead (README, "Running several controllers").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { CliError, type CliIo } from '../io.js';

interface Replica {
  index: number;
  dir: string;
  port: number;
  child: ChildProcess;
  url: Promise<string>;
}

/** How to run this same program again: the script beside Node, or the one-file binary alone. */
function selfCommand(): string[] {
  const script = process.argv[1];
  return script && existsSync(script) && script !== process.execPath ? [script] : [];
}

function startReplica(
  io: CliIo,
  index: number,
  dir: string,
  host: string,
  port: number,
  db: string,
  logLevel: string,
): Replica {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const log = createWriteStream(join(dir, 'serve.log'), { flags: 'a', mode: 0o600 });
  const child = spawn(process.execPath, [...selfCommand(), 'serve', '--data-dir', dir, '--listen', `${host}:${port}`], {
    // The URL (and any password in it) goes by the environment, not a command line other users can read.
    env: { ...io.env, EDGECTL_LOG_LEVEL: logLevel === 'silent' ? 'info' : logLevel, EDGECTL_DB_URL: db },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  let seen = '';
  const url = new Promise<string>((resolveUrl, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const line = seen.split('\n').find((l) => l.includes('"edgectl controller listening"'));
      if (line) resolveUrl((JSON.parse(line) as { url: string }).url);
    });
    child.on('exit', (code) =>
      reject(
        new CliError(`replica ${index} stopped before it was ready (exit ${code}); see ${join(dir, 'serve.log')}`, 1),
      ),
    );
  });
  return { index, dir, port, child, url };
}

export function registerCluster(program: Command, io: CliIo): void {
  program
    .command('cluster')
    .description('start a local cluster of controllers over one PostgreSQL database (for trying and testing)')
    .requiredOption(
      '--db <url>',
      'PostgreSQL database postgres://user@host:port/db (env EDGECTL_DB_URL)',
      io.env.EDGECTL_DB_URL,
    )
    .option('--replicas <n>', 'how many controllers', '3')
    .option('--dir <dir>', 'where their data dirs go (replica-1, replica-2, …)', './edgectl-cluster')
    .option('--host <host>', 'listen host of every replica', '127.0.0.1')
    .option('--port <port>', 'port of the first replica; the others take the next ones', '1280')
    .option('--log-level <level>', 'log level of the replicas (their logs go to serve.log in each data dir)', 'info')
    .action(
      async (flags: { db: string; replicas: string; dir: string; host: string; port: string; logLevel: string }) => {
        const count = Number(flags.replicas);
        const base = Number(flags.port);
        if (!Number.isInteger(count) || count < 1 || count > 16)
          throw new CliError('error: --replicas must be a whole number from 1 to 16', 2);
        if (!Number.isInteger(base) || base < 1 || base + count - 1 > 65535)
          throw new CliError('error: --port must leave room for every replica below 65536', 2);
        if (!/^postgres(ql)?:\/\//i.test(flags.db))
          throw new CliError('error: --db must be a postgres:// URL (a cluster shares one PostgreSQL database)', 2);
        const root = resolve(flags.dir);
        const started = Date.now();
        const replicas: Replica[] = [];
        const stopAll = (signal: NodeJS.Signals) => {
          for (const r of replicas) if (r.child.exitCode === null) r.child.kill(signal);
        };
        process.once('SIGINT', () => stopAll('SIGINT'));
        process.once('SIGTERM', () => stopAll('SIGTERM'));
        const dirOf = (i: number) => join(root, `replica-${i}`);
        try {
          // The first one creates the network; the others start from its PKI and token key.
          const first = startReplica(io, 1, dirOf(1), flags.host, base, flags.db, flags.logLevel);
          replicas.push(first);
          await first.url;
          for (let i = 2; i <= count; i++) {
            const dir = dirOf(i);
            mkdirSync(dir, { recursive: true, mode: 0o700 });
            if (!existsSync(join(dir, 'pki'))) cpSync(join(first.dir, 'pki'), join(dir, 'pki'), { recursive: true });
            if (!existsSync(join(dir, 'token.key'))) copyFileSync(join(first.dir, 'token.key'), join(dir, 'token.key'));
            replicas.push(startReplica(io, i, dir, flags.host, base + i - 1, flags.db, flags.logLevel));
          }
          const urls = await Promise.all(replicas.map((r) => r.url));
          const seconds = ((Date.now() - started) / 1000).toFixed(1);
          io.out(`cluster ready: ${count} replicas in ${seconds} s`);
          urls.forEach((u, i) => io.out(`  replica-${i + 1}  ${u}  ${dirOf(i + 1)}`));
          const adminFile = join(first.dir, 'default-admin.json');
          if (existsSync(adminFile)) io.out(`default admin credentials: ${adminFile}`);
          io.out(`CA bundle for clients: ${join(first.dir, 'pki', 'ca-bundle.pem')}`);
        } catch (e) {
          stopAll('SIGTERM');
          throw e;
        }
        const codes = await Promise.all(
          replicas.map(
            (r) =>
              new Promise<number>((done) => {
                if (r.child.exitCode !== null) done(r.child.exitCode);
                else r.child.once('exit', (code) => done(code ?? 1));
              }),
          ),
        );
        if (codes.some((c) => c !== 0)) throw new CliError(`replicas stopped with exit codes ${codes.join(', ')}`, 1);
      },
    );
}
