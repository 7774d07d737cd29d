import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { bearerToken, clientAddress, requireUserSession } from '../../lib/auth';
import { unauthorized } from '../../lib/errors';
import { createRouter, errorResponses, jsonBody, jsonContent } from '../../lib/openapi';
import { RATE_BUDGETS } from '../../lib/rate-limit';
import { UserEnvelope } from '../users/user.schemas';
import {
  ChangePasswordBody,
  LoginBody,
  LoginResponse,
  PasswordResetAccepted,
  PasswordResetBody,
  PasswordResetConfirmBody,
} from './auth.schemas';
import { changeOwnPassword, confirmPasswordReset, login, logout, PASSWORD_RESET_ACCEPTED, requestPasswordReset } from './auth.service';

const tags = ['Auth'];
const PER_ADDRESS = RATE_BUDGETS.passwordAttemptsPerAddress;
const LOGIN = RATE_BUDGETS.login;
const CHANGE = RATE_BUDGETS.passwordChange;

/** Unauthenticated /v1/auth routes (logout reads the session bearer itself). */
export function authRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/auth/login',
      tags,
      summary: 'Dashboard login: returns a ddu_ session bearer (24 h fixed expiry)',
      description:
        `Unknown email, wrong password and disabled user are one identical 401 at equal hashing cost. Correct credentials of a suspended tenant are 403. Three budgets are spent before any password hash, counted across all API processes, and the first one used up is 429 rate_limited (no Retry-After) with no hash: ${PER_ADDRESS.points} failed attempts per client address per ${PER_ADDRESS.durationSeconds} s fixed window (shared with agent login and password change; a right password gives its attempt back; the address honours X-Forwarded-For only from TRUSTED_PROXIES), ${LOGIN.points} attempts per email per ${LOGIN.durationSeconds / 60}-minute window, and the deployment's LOGIN_HASHES_PER_SECOND.`,
      request: { body: jsonBody(LoginBody) },
      responses: {
        200: jsonContent(LoginResponse, 'Logged in'),
        ...errorResponses(400, 401, 403, 413, 415, 429),
      },
    }),
    async (c) => {
      const { email, password } = c.req.valid('json');
      return c.json(await login(deps, email, password, clientAddress(c, deps)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/auth/logout',
      tags,
      security: [{ bearer: [] }],
      summary: 'Revoke the presented session (idempotent)',
      description: '204 for any well-formed bearer, live session or not; 401 only when the Authorization header is missing or malformed.',
      responses: { 204: { description: 'Logged out' }, ...errorResponses(401) },
    }),
    async (c) => {
      const token = bearerToken(c);
      if (!token) throw unauthorized();
      await logout(deps, token);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/auth/password-reset',
      tags,
      summary: 'Request a password-reset link',
      description:
        'Always 202 with a byte-identical body at once, whether or not the address has an account, and also when rate limited (3 requests per email per hour; over budget no mail is sent). Looking the address up, issuing the link, auditing and mailing happen afterwards in a durable workflow, so neither the answer nor its timing depends on the account. The link is valid for one hour, is one-shot and is superseded by a newer request. The mail is queued encrypted in the mail outbox with the link, then delivered through SMTP after commit when SMTP_URL is set; without SMTP it stays in the outbox (operator warning and metric).',
      request: { body: jsonBody(PasswordResetBody) },
      responses: { 202: jsonContent(PasswordResetAccepted, 'Accepted'), ...errorResponses(400, 413, 415) },
    }),
    async (c) => {
      await requestPasswordReset(deps, c.req.valid('json').email);
      return c.json(PASSWORD_RESET_ACCEPTED, 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/auth/password-reset/confirm',
      tags,
      summary: 'Redeem a reset link: set the new password and revoke every session',
      description:
        'The password policy (12 to 128 characters) is checked first: a bad password is 422 and the link stays redeemable. An unknown, tampered, expired, superseded or already-redeemed token is one identical 401.',
      request: { body: jsonBody(PasswordResetConfirmBody) },
      responses: { 204: { description: 'Password updated' }, ...errorResponses(400, 401, 413, 415, 422) },
    }),
    async (c) => {
      const { token, password } = c.req.valid('json');
      await confirmPasswordReset(deps, token, password);
      return c.body(null, 204);
    },
  );
  return app;
}

/** Authenticated: rotates the caller's own password (ddu_ sessions only). */
export function mePasswordRoutes(deps: AppDeps) {
  const app = createRouter();
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/me/password',
      tags,
      security: [{ bearer: [] }],
      middleware: [requireUserSession],
      summary: 'Change the calling user’s password',
      description:
        `Needs a ddu_ session (other credentials are 403). \`current_password\` must be right (401 otherwise); the new one must meet the policy (422). Every other live session of the user is revoked; the calling session stays. Before the current password is hashed the attempt spends the same client-address and deployment budgets as login and ${CHANGE.points} attempts per user per ${CHANGE.durationSeconds / 60}-minute window; the first used up is 429 rate_limited (no Retry-After).`,
      request: { body: jsonBody(ChangePasswordBody) },
      responses: { 200: jsonContent(UserEnvelope, 'Password changed'), ...errorResponses(400, 401, 403, 413, 415, 422, 429) },
    }),
    async (c) => {
      const principal = c.get('principal');
      if (principal.kind !== 'user') throw unauthorized();
      const body = c.req.valid('json');
      return c.json({ user: await changeOwnPassword(deps, principal, body.current_password, body.new_password, clientAddress(c, deps)) }, 200);
    },
  );
  return app;
}
