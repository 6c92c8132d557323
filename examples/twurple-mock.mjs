// Twurple in mock mode, with nothing else configured: TWURPLE_MOCK_API_PORT sends its calls to
// helixd's /mock/* and /auth/*, and the demo client comes from GET /units/clients.
//   npm install @twurple/api @twurple/auth
//   HELIXD_URL  default http://127.0.0.1:8080 (a development-profile helixd)
import { ApiClient } from '@twurple/api';
import { AppTokenAuthProvider } from '@twurple/auth';

const base = process.env.HELIXD_URL ?? 'http://127.0.0.1:8080';
process.env.TWURPLE_MOCK_API_PORT = new URL(base).port;
const [demo] = (await (await fetch(`${base}/units/clients`)).json()).data;
const api = new ApiClient({ authProvider: new AppTokenAuthProvider(demo.ID, demo.Secret) });
const { data: games } = await api.games.getTopGames();
console.log(`top games: ${games.map((game) => game.name).join(', ')}`);
