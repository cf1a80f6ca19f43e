/** The JSON Schema of the built-in `ziti-tunneler-client.v1` config type, as tunnelers and SDKs expect it (migration 0007). */
export const schema: Record<string, unknown> = {
  $id: 'http://edge.openziti.org/schemas/ziti-tunneler-client.v1.config.json',
  type: 'object',
  additionalProperties: false,
  required: ['hostname', 'port'],
  properties: {
    hostname: {
      type: 'string',
    },
    port: {
      type: 'integer',
      minimum: 0,
      maximum: 65535,
    },
  },
};
