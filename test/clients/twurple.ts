// Twurple 8's mock mode pointed at a test app: with TWURPLE_MOCK_API_PORT set, Twurple sends API
// calls to http://localhost:<port>/mock/* and token calls to /auth/*.
import type { TestApp } from '../helpers.ts';

/**
 * Listens on every address localhost names (Twurple calls http://localhost:<port>) and points
 * Twurple's mock mode there. `restore` puts back the setting found (call it before `t.close()`).
 */
export async function pointTwurpleAt(t: TestApp): Promise<{ base: string; restore: () => void }> {
  const previous = process.env.TWURPLE_MOCK_API_PORT;
  await t.app.listen({ port: 0, host: 'localhost' });
  const addr = t.app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  process.env.TWURPLE_MOCK_API_PORT = String(port);
  return {
    base: `http://localhost:${port}`,
    restore() {
      if (previous === undefined) delete process.env.TWURPLE_MOCK_API_PORT;
      else process.env.TWURPLE_MOCK_API_PORT = previous;
    },
  };
}
