/**
 * The auth module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { Guard } from './guard.ts';
export { assertAcceptablePassword, hashPassword, passwordProblem } from './passwords.ts';
export { countUsers, userByEmail, usersByIds } from './queries.ts';
export { principalKey, registerRateLimits } from './rate-limit.ts';
export { authRoutes } from './routes.ts';
export { CookieFlag, OrganizationSchema, TokensSchema, UserSchema } from './schemas.ts';
export { AuthService, normalizeEmail, publicUser, type Tokens, type User } from './service.ts';
export { deliverTokens, secureCookies } from './session-cookie.ts';
