import ipaddr from 'ipaddr.js';
import type { FastifyRequest } from 'fastify';
import { SCOPES } from '../api-keys/index.ts';
import { forbidden, unauthorized } from '../../platform/errors.ts';
import { Type } from '../../platform/http/schemas.ts';
import { routesPlugin } from '../../platform/http/plugin.ts';
import { tokenMatches } from './channel.ts';
import { createApiKey, createOwner, setPlan } from './operations.ts';
import type { AdminPorts } from './ports.ts';

/** Whether the connection comes from this machine: loopback, or to the very address it came from. */
function fromThisMachine(request: FastifyRequest): boolean {
  const { remoteAddress, localAddress } = request.raw.socket;
  if (!remoteAddress) return false;
  if (remoteAddress === localAddress) return true;
  return ipaddr.isValid(remoteAddress) && ipaddr.process(remoteAddress).range() === 'loopback';
}

export interface AdminRoutesOptions extends AdminPorts {
  /** The token in DATA_DIR/admin.json. */
  token: string;
}

/**
 * The CLI's bootstrap commands, run by the server for a CLI that cannot open the embedded database
 * the server holds. Registered only by `npm start` on an embedded data directory; the token is the
 * one in DATA_DIR/admin.json. Not part of the public API: hidden from the OpenAPI document.
 */
export const adminRoutes = routesPlugin<AdminRoutesOptions>('admin-routes', [], (app, { token, ...ports }) => {
  const guard = async (request: FastifyRequest) => {
    if (!fromThisMachine(request)) throw forbidden('The admin routes answer only to this machine');
    const auth = request.headers.authorization;
    if (typeof auth !== 'string' || !auth.startsWith('Bearer ') || !tokenMatches(auth.slice(7), token)) {
      throw unauthorized('The admin routes need the token from DATA_DIR/admin.json');
    }
  };
  const hide = true;

  app.post(
    '/_admin/owners',
    {
      onRequest: guard,
      schema: {
        hide,
        body: Type.Object(
          {
            email: Type.String({ format: 'email', maxLength: 254 }),
            password: Type.String({ minLength: 8, maxLength: 256 }),
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            organizationName: Type.String({ minLength: 1, maxLength: 200 }),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      reply.code(201);
      return createOwner(ports, request.body);
    },
  );

  app.post(
    '/_admin/api-keys',
    {
      onRequest: guard,
      schema: {
        hide,
        body: Type.Object(
          {
            org: Type.String({ minLength: 1, maxLength: 200 }),
            name: Type.String({ minLength: 1, maxLength: 200 }),
            scopes: Type.Array(Type.Union(SCOPES.map((s) => Type.Literal(s))), { minItems: 1, maxItems: SCOPES.length }),
            projectId: Type.Optional(Type.String({ maxLength: 64 })),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      reply.code(201);
      return createApiKey(ports, request.body);
    },
  );

  app.post(
    '/_admin/plans',
    {
      onRequest: guard,
      schema: {
        hide,
        body: Type.Object(
          {
            org: Type.String({ minLength: 1, maxLength: 200 }),
            plan: Type.String({ minLength: 1, maxLength: 64 }),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => setPlan(ports, request.body),
  );
});
