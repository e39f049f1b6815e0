/**
 * Where the public API and its OpenAPI document are served (contract §1): one home for both paths,
 * used by the app (./app.ts), the fixture's route templates and the CLI's banner.
 */

/** The public API's base path: every operation's path follows it. */
export const API_BASE = '/api/public/v1';

/** The generated OpenAPI 3.1 document of the public API. */
export const OPENAPI_PATH = '/api/public/openapi.json';
