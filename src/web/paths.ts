/** Where the settings area lives (decisions.md §18): every page is under this path, and so is its cookie. */
export const SETTINGS_BASE = '/settings';
export const SIGN_IN_PATH = `${SETTINGS_BASE}/sign-in`;
export const API_ACCESS_PATH = `${SETTINGS_BASE}/api-access`;
/** The create form's target; `${TOKENS_PATH}/ID/revoke` is a token's revocation. */
export const TOKENS_PATH = `${API_ACCESS_PATH}/tokens`;
