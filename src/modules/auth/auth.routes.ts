import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { bearerToken, requireUserSession } from '../../lib/auth';
import { unauthorized } from '../../lib/errors';
import { createRouter, errorResponses, jsonBody, jsonContent } from '../../lib/openapi';
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
        'Unknown email, wrong password and disabled user are one identical 401 at equal hashing cost. Correct credentials of a suspended tenant are 403. At most 10 attempts per email per 15-minute fixed window (429 rate_limited), counted across all API processes.',
      request: { body: jsonBody(LoginBody) },
      responses: {
        200: jsonContent(LoginResponse, 'Logged in'),
        ...errorResponses(400, 401, 403, 413, 415, 429),
      },
    }),
    async (c) => {
      const { email, password } = c.req.valid('json');
      return c.json(await login(deps, email, password), 200);
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
        'Always 202 with a byte-identical body, whether or not the address has an account, and also when rate limited (3 requests per email per hour; over budget no mail is sent). The link is valid for one hour, is one-shot and is superseded by a newer request. Mail goes through SMTP when SMTP_URL is set, else it is queued encrypted in the mail outbox.',
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
        'Needs a ddu_ session (other credentials are 403). `current_password` must be right (401 otherwise); the new one must meet the policy (422). Every other live session of the user is revoked; the calling session stays.',
      request: { body: jsonBody(ChangePasswordBody) },
      responses: { 200: jsonContent(UserEnvelope, 'Password changed'), ...errorResponses(400, 401, 403, 413, 415, 422) },
    }),
    async (c) => {
      const principal = c.get('principal');
      if (principal.kind !== 'user') throw unauthorized();
      const body = c.req.valid('json');
      return c.json({ user: await changeOwnPassword(deps, principal, body.current_password, body.new_password) }, 200);
    },
  );
  return app;
}
