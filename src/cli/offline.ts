/**
 * `--data-dir DIR` on the admin commands: the command then runs in-process against a stopped controller's store
 * instead of over HTTPS with a saved login (README.md, "Offline"; docs/decisions.md, "Offline CLI").
 * Only the flag turns this on, never `$EDGECTL_DATA_DIR`: that variable configures `serve`, and honouring it here
 * would silently move every admin command of a shell that has it set off the running controller.
 */
import { Option, type Command } from 'commander';
import type { CliIo } from './io.js';

/** Top-level commands without the offline option: they are not Management API calls, or have their own. */
const NOT_OFFLINE: ReadonlySet<string> = new Set([
  'serve',
  'db',
  'pki',
  'login',
  'logout',
  'enroll',
  'context',
  'completion',
  'version',
  'help',
]);

export const DATA_DIR_HELP = "run offline, on this stopped controller's data dir, as its default admin";

function leaves(cmd: Command): Command[] {
  return cmd.commands.length === 0 ? [cmd] : cmd.commands.flatMap(leaves);
}

/** Adds `--data-dir` to every admin command and records it in `io` before the command's action runs. */
export function registerOffline(program: Command, io: CliIo): void {
  const offline = new WeakSet<Command>();
  for (const top of program.commands) {
    if (NOT_OFFLINE.has(top.name())) continue;
    for (const leaf of leaves(top)) {
      leaf.addOption(new Option('--data-dir <dir>', DATA_DIR_HELP));
      offline.add(leaf);
    }
  }
  program.hook('preAction', (_program, action) => {
    if (!offline.has(action)) return;
    const dir = action.opts<{ dataDir?: string }>().dataDir;
    if (dir !== undefined) io.dataDir = dir;
  });
}

/** Closes what an offline command opened (its session, the store, the lock); the next command of `io` is online. */
export async function closeOffline(io: CliIo): Promise<void> {
  const offline = io.offline;
  io.offline = undefined;
  io.dataDir = undefined;
  try {
    await offline?.close();
  } catch (e) {
    io.err(`warning: closing the offline store failed: ${(e as Error).message}`);
  }
}
