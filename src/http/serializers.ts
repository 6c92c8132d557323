// The serializers of the routes' answers: Fastify's own (fast-json-stringify, through the compiler
// factory Fastify builds by default), each compiled when its route first answers with that status
// rather than every one at start. Compiling them all was a large part of a start's CPU
// (docs/perf/2026-11-22-startup.md), and a route answers with few of the statuses it declares. A
// schema shared by several routes (each operation's /helix and /mock routes, and their HEAD routes)
// is compiled once.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Factory = ReturnType<typeof SerializerSelector>;
type Serializer = ReturnType<ReturnType<Factory>>;

/** A `compilersFactory.buildSerializer` for Fastify's `schemaController` option. */
export const lazySerializers: Factory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  const compiled = new WeakMap<object, Serializer>();
  return (route) => {
    const schema = route.schema;
    const shared = typeof schema === 'object' && schema !== null;
    let serialize: Serializer | undefined;
    return (doc) => {
      if (!serialize) {
        serialize = (shared && compiled.get(schema)) || compile(route);
        if (shared) compiled.set(schema, serialize);
      }
      return serialize(doc);
    };
  };
};
