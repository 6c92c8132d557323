// The docs app: /openapi.json and Swagger UI at /docs (src/http/openapi.ts), built on the first
// request to either from the routes the served app kept. The routes are added here only to be
// described by @fastify/swagger: they are never called, so nothing validates or serialises.
import swagger, { type SwaggerOptions } from '@fastify/swagger';
import swaggerUi, { type FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';

export async function buildDocsApp(
  routes: readonly RouteOptions[],
  swaggerOptions: SwaggerOptions,
  uiOptions: FastifySwaggerUiOptions,
): Promise<FastifyInstance> {
  const docs = Fastify({
    logger: false,
    exposeHeadRoutes: false,
    routerOptions: { ignoreTrailingSlash: true },
  });
  docs.setValidatorCompiler(() => () => true);
  docs.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await docs.register(swagger, swaggerOptions);
  const unused = async () => undefined;
  for (const { method, url, schema, config, links } of routes)
    docs.route({ method, url, schema, config, links, handler: unused } as RouteOptions);
  await docs.register(swaggerUi, uiOptions);
  await docs.ready();
  return docs;
}
