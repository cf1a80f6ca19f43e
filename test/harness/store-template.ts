/**
 * The migrated template store of the test servers (test/harness/server.ts): a store file with every migration
 * applied and nothing else. The test runner makes one for a whole run (`node store-template.js FILE`, then
 * `EDGECTL_TEST_STORE_TEMPLATE=FILE` for every test process); a process not given one makes its own.
 */
import { pathToFileURL } from 'node:url';
import { openStore } from '../../src/model/store.js';

/** Writes the template store to `file`. */
export async function makeTemplateStore(file: string): Promise<void> {
  const store = await openStore(file);
  await store.close();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: store-template.js FILE');
  await makeTemplateStore(file);
}
