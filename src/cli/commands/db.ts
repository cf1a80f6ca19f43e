/** `edgectl db check-integrity`: checks the store offline, as the controller does at start but thoroughly. */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { CliError, type CliIo } from '../io.js';
import { registerDbOffline } from './db-offline.js';

export function registerDb(program: Command, io: CliIo): void {
  const db = program.command('db').description('offline operations on the controller store');
  db.command('check-integrity')
    .description("check the store's file structure (SQLite integrity_check) and its schema against the migrations")
    .option('--data-dir <dir>', 'data directory (env EDGECTL_DATA_DIR; default ./edgectl-data)')
    .action(async (flags: { dataDir?: string }) => {
      const dir = resolve(flags.dataDir ?? io.env.EDGECTL_DATA_DIR ?? './edgectl-data');
      // Loaded here: only this command needs SQLite.
      const { checkStoreIntegrity } = await import('../../daemon/store-check.js');
      const { file, problems } = await checkStoreIntegrity(dir);
      if (problems.length === 0) {
        io.out(`ok: ${file} passed SQLite's integrity check and has every table and column its migrations create`);
        return;
      }
      for (const p of problems) io.err(`problem: ${p}`);
      throw new CliError(
        `${file} failed the integrity check (${problems.length} problem${problems.length === 1 ? '' : 's'}); restore a backup`,
        1,
      );
    });
  registerDbOffline(db, io);
}
