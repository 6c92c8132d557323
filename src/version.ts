// helixd's version: package.json's, read at start-up (the path is the same from src/ and dist/).
import { createRequire } from 'node:module';

export const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
