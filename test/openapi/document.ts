/** The OpenAPI document the app serves, built from a throwaway in-memory store (for the lint and its test). */
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { systemClock } from '../../src/domain/clock.js';
import { assembleApp } from '../../src/app.js';
import { silentLogger } from '../../src/logger.js';
import { createProviders } from '../../src/providers/index.js';

export async function servedDocument(): Promise<Record<string, any>> {
  const config = loadConfig(undefined, {}, { db: ':memory:' });
  const store = await openStore(':memory:');
  await migrate(store);
  const { openapi } = assembleApp({
    config,
    store,
    clock: systemClock,
    logger: silentLogger,
    providers: createProviders(config, silentLogger, {}),
  });
  await store.close();
  return openapi;
}
