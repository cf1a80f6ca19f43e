/** Logged URLs never carry secrets: query tokens and any UUID (session tokens can appear inside filters). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { safeUrl } from '../../../src/daemon/log.js';

test('tokens are masked wherever they appear in a URL', () => {
  assert.equal(safeUrl('/enroll/ott?token=abc&x=1'), '/enroll/ott?token=***&x=1');
  assert.equal(
    safeUrl('/api-sessions?filter=token%3D%22b1f8a21e-1111-4222-8333-123456789abc%22'),
    '/api-sessions?filter=token%3D%22***%22',
  );
  assert.equal(safeUrl('/x?filter=token="B1F8A21E-1111-4222-8333-123456789ABC"'), '/x?filter=token="***"');
  assert.equal(safeUrl('/identities/abc123'), '/identities/abc123');
});
