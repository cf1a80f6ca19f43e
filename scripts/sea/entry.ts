/** The one-file binary's entry (scripts/build-binary.mjs bundles it): what `bin/edgectl` runs, without Node's ESM loader. */
import { main } from '../../src/cli/main.js';

void main();
