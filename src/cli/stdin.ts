/** Reading secrets and documents from standard input (`--password-stdin`, `-f -`). */
import { CliError, type CliIo } from './io.js';

/** All of stdin as text; refused when stdin is a terminal (a script meant to pipe something in). */
export async function readStdin(io: CliIo, what: string): Promise<string> {
  if (io.stdin.isTTY) throw new CliError(`error: ${what} reads standard input, which is a terminal: pipe it in`, 2);
  const chunks: Buffer[] = [];
  for await (const c of io.stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks).toString('utf8');
}

/** A password piped in: the first line, without its line ending (as `docker login --password-stdin`). */
export async function passwordFromStdin(io: CliIo, flag = '--password-stdin'): Promise<string> {
  const text = await readStdin(io, flag);
  const password = text.replace(/\r?\n[\s\S]*$/, '');
  if (password === '') throw new CliError(`error: ${flag}: standard input holds no password`, 2);
  return password;
}
