/** The JSON Schema of the built-in `host.v1` config type, as tunnelers and SDKs expect it (migration 0007). */
export const schema: Record<string, unknown> = {
  $id: 'http://ziti-edge.netfoundry.io/schemas/host.v1.schema.json',
  additionalProperties: false,
  allOf: [
    {
      else: {
        required: ['protocol'],
      },
      if: {
        properties: {
          forwardProtocol: {
            const: true,
          },
        },
        required: ['forwardProtocol'],
      },
      then: {
        required: ['allowedProtocols'],
      },
    },
    {
      else: {
        required: ['address'],
      },
      if: {
        properties: {
          forwardAddress: {
            const: true,
          },
        },
        required: ['forwardAddress'],
      },
      then: {
        required: ['allowedAddresses'],
      },
    },
    {
      else: {
        required: ['port'],
      },
      if: {
        properties: {
          forwardPort: {
            const: true,
          },
        },
        required: ['forwardPort'],
      },
      then: {
        required: ['allowedPortRanges'],
      },
    },
  ],
  definitions: {
    action: {
      additionalProperties: false,
      properties: {
        action: {
          pattern: '(mark (un)?healthy|increase cost [0-9]+|decrease cost [0-9]+|send event)',
          type: 'string',
        },
        consecutiveEvents: {
          maximum: 65535,
          minimum: 0,
          type: 'integer',
        },
        duration: {
          $ref: '#/definitions/duration',
        },
        trigger: {
          enum: ['fail', 'pass', 'change'],
          type: 'string',
        },
      },
      required: ['trigger', 'action'],
      type: 'object',
    },
    actionList: {
      items: {
        $ref: '#/definitions/action',
      },
      maxItems: 20,
      minItems: 1,
      type: 'array',
    },
    addressTranslation: {
      oneOf: [
        {
          $ref: '#/definitions/ipv4AddressTranslation',
        },
        {
          $ref: '#/definitions/ipv6AddressTranslation',
        },
      ],
    },
    dialAddress: {
      format: 'idn-hostname',
      not: {
        pattern: '^$',
      },
      type: 'string',
    },
    duration: {
      pattern: '[0-9]+(h|m|s|ms)',
      type: 'string',
    },
    httpCheck: {
      additionalProperties: false,
      properties: {
        actions: {
          $ref: '#/definitions/actionList',
        },
        body: {
          type: 'string',
        },
        expectInBody: {
          type: 'string',
        },
        expectStatus: {
          maximum: 599,
          minimum: 100,
          type: 'integer',
        },
        interval: {
          $ref: '#/definitions/duration',
        },
        method: {
          $ref: '#/definitions/method',
        },
        timeout: {
          $ref: '#/definitions/duration',
        },
        url: {
          type: 'string',
        },
      },
      required: ['interval', 'timeout', 'url'],
      type: 'object',
    },
    httpCheckList: {
      items: {
        $ref: '#/definitions/httpCheck',
      },
      type: 'array',
    },
    inhabitedSet: {
      minItems: 1,
      type: 'array',
      uniqueItems: true,
    },
    ipv4AddressTranslation: {
      additionalProperties: false,
      properties: {
        from: {
          format: 'ipv4',
          type: 'string',
        },
        prefixLength: {
          maximum: 32,
          minimum: 0,
          type: 'integer',
        },
        to: {
          format: 'ipv4',
          type: 'string',
        },
      },
      type: 'object',
    },
    ipv6AddressTranslation: {
      additionalProperties: false,
      properties: {
        from: {
          format: 'ipv6',
          type: 'string',
        },
        prefixLength: {
          maximum: 128,
          minimum: 0,
          type: 'integer',
        },
        to: {
          format: 'ipv6',
          type: 'string',
        },
      },
      type: 'object',
    },
    listenAddress: {
      format: 'idn-hostname',
      not: {
        pattern: '^$',
      },
      type: 'string',
    },
    method: {
      enum: ['GET', 'POST', 'PUT', 'PATCH'],
      type: 'string',
    },
    portCheck: {
      additionalProperties: false,
      properties: {
        actions: {
          $ref: '#/definitions/actionList',
        },
        address: {
          type: 'string',
        },
        interval: {
          $ref: '#/definitions/duration',
        },
        timeout: {
          $ref: '#/definitions/duration',
        },
      },
      required: ['interval', 'timeout', 'address'],
      type: 'object',
    },
    portCheckList: {
      items: {
        $ref: '#/definitions/portCheck',
      },
      type: 'array',
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
    address: {
      $ref: '#/definitions/dialAddress',
    },
    allowedAddresses: {
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
    allowedPortRanges: {
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
    allowedProtocols: {
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
    forwardAddress: {
      enum: [true],
      type: 'boolean',
    },
    forwardAddressTranslations: {
      allOf: [
        {
          $ref: '#/definitions/inhabitedSet',
        },
        {
          items: {
            $ref: '#/definitions/addressTranslation',
          },
        },
      ],
    },
    forwardPort: {
      enum: [true],
      type: 'boolean',
    },
    forwardProtocol: {
      enum: [true],
      type: 'boolean',
    },
    httpChecks: {
      $ref: '#/definitions/httpCheckList',
    },
    listenOptions: {
      additionalProperties: false,
      properties: {
        bindUsingEdgeIdentity: {
          type: 'boolean',
        },
        connectTimeout: {
          $ref: '#/definitions/duration',
        },
        connectTimeoutSeconds: {
          $ref: '#/definitions/timeoutSeconds',
          deprecated: true,
        },
        cost: {
          maximum: 65535,
          minimum: 0,
          type: 'integer',
        },
        identity: {
          type: 'string',
        },
        maxConnections: {
          minimum: 1,
          type: 'integer',
        },
        precedence: {
          enum: ['default', 'required', 'failed'],
          type: 'string',
        },
      },
      type: 'object',
    },
    port: {
      $ref: '#/definitions/portNumber',
    },
    portChecks: {
      $ref: '#/definitions/portCheckList',
    },
    protocol: {
      $ref: '#/definitions/protocolName',
    },
    proxy: {
      $ref: '#/definitions/proxyConfiguration',
    },
  },
  type: 'object',
};
