/** The Client API's anonymous listing of external JWT signers (parity: docs/reference-notes.md §5.4). */
import { listLoginSigners } from '../../model/services/ext-jwt/ext-jwt-listing.js';
import { listOf } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';
import { listOptions } from './crud.js';

export const externalJwtSignerRoutes: RouteDef[] = [
  route({
    apis: ['client'],
    method: 'GET',
    path: '/external-jwt-signers',
    operationId: 'listExternalJwtSigners',
    tag: 'External JWT Signer',
    access: 'anonymous',
    success: 200,
    envelope: 'listClientExternalJwtSignersEnvelope',
    summary: 'List Client Authentication External JWT',
    async handler(rc) {
      const { page, records } = await listLoginSigners(rc.ctx, listOptions(rc));
      return listOf(records, page);
    },
  }),
];
