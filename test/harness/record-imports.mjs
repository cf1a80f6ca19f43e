// `node --import ./test/harness/record-imports.mjs …`: appends the URL of every module the process loads (one a
// line) to the file named by $RECORD_IMPORTS, so a test can see what a command really loads (cli-startup.test.ts).
import { register } from 'node:module';

const hooks = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.RECORD_IMPORTS, result.url + '\\n');
  return result;
}`;
register('data:text/javascript,' + encodeURIComponent(hooks));
