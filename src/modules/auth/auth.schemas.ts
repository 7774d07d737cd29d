import { PASSWORD_MAX, PASSWORD_MIN } from '../../lib/passwords';
import { z } from '../../lib/openapi';
import { TenantSchema } from '../tenants/tenant.schemas';
import { UserSchema } from '../users/user.schemas';

export const LoginBody = z.strictObject({ email: z.string(), password: z.string() }).openapi('Login');

export const SessionSchema = z
  .object({
    id: z.string().uuid(),
    user_id: z.string().uuid(),
    expires_at: z.string().openapi({ format: 'date-time' }),
    revoked_at: z.string().openapi({ format: 'date-time' }).nullable(),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('UserSession');

export const LoginResponse = z.object({
  token: z.string().openapi({ description: 'Plaintext ddu_ bearer, shown once' }),
  session: SessionSchema,
  user: UserSchema,
  tenant: TenantSchema,
});

// Loose on purpose: only a missing or non-string email is 400; everything else is the same 202.
export const PasswordResetBody = z.object({ email: z.string() }).openapi('PasswordResetRequest');

export const PasswordResetAccepted = z.object({ status: z.literal('accepted'), message: z.string() });

export const PasswordResetConfirmBody = z
  .strictObject({
    token: z.string().openapi({ description: 'The ddr_ token from the reset link' }),
    password: z.string().openapi({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX, description: `The new password, ${PASSWORD_MIN} to ${PASSWORD_MAX} characters (422 unprocessable otherwise)` }),
  })
  .openapi('PasswordResetConfirm');

export const ChangePasswordBody = z
  .strictObject({ current_password: z.string(), new_password: z.string().openapi({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX }) })
  .openapi('ChangePassword');
