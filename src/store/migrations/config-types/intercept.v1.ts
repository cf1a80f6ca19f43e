/** The JSON Schema of the built-in `intercept.v1` config type, as tunnelers and SDKs expect it (migration 0007). */
export const schema: Record<string, unknown> = {
  $id: 'http://edge.openziti.org/schemas/intercept.v1.config.json',
  additionalProperties: false,
  definitions: {
    dialAddress: {
      format: 'idn-hostname',
      not: {
        pattern: '^$',
      },
      type: 'string',
    },
    inhabitedSet: {
      minItems: 1,
      type: 'array',
      uniqueItems: true,
    },
    listenAddress: {
      format: 'idn-hostname',
      not: {
        pattern: '^$',
      },
      type: 'string',
    },
    portNumber: {
      maximum: 65535,
      minimum: 0,
      type: 'integer',
    },
    portRange: {
      additionalProperties: false,
      properties: {
        high: {
          $ref: '#/definitions/portNumber',
        },
        low: {
          $ref: '#/definitions/portNumber',
        },
      },
      required: ['low', 'high'],
      type: 'object',
    },
    protocolName: {
      enum: ['tcp', 'udp'],
      type: 'string',
    },
    proxyConfiguration: {
      properties: {
        address: {
          type: 'string',
        },
        type: {
          $ref: '#/definitions/proxyType',
        },
      },
      required: ['type', 'address'],
      type: 'object',
    },
    proxyType: {
      enum: ['http'],
      type: 'string',
    },
    timeoutSeconds: {
      maximum: 2147483647,
      minimum: 0,
      type: 'integer',
    },
  },
  properties: {
    addresses: {
      allOf: [
        {
          $ref: '#/definitions/inhabitedSet',
        },
        {
          items: {
            $ref: '#/definitions/listenAddress',
          },
        },
      ],
    },
    allowedSourceAddresses: {
      allOf: [
        {
          $ref: '#/definitions/inhabitedSet',
        },
        {
          items: {
            $ref: '#/definitions/listenAddress',
          },
        },
      ],
    },
    dialOptions: {
      additionalProperties: false,
      properties: {
        connectTimeoutSeconds: {
          $ref: '#/definitions/timeoutSeconds',
        },
        identity: {
          type: 'string',
        },
      },
      type: 'object',
    },
    portRanges: {
      allOf: [
        {
          $ref: '#/definitions/inhabitedSet',
        },
        {
          items: {
            $ref: '#/definitions/portRange',
          },
        },
      ],
    },
    protocols: {
      allOf: [
        {
          $ref: '#/definitions/inhabitedSet',
        },
        {
          items: {
            $ref: '#/definitions/protocolName',
          },
        },
      ],
    },
    sourceIp: {
      type: 'string',
    },
  },
  required: ['protocols', 'addresses', 'portRanges'],
  type: 'object',
};
