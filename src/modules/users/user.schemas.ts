import { PASSWORD_MAX, PASSWORD_MIN } from '../../lib/passwords';
import { z } from '../../lib/openapi';
import { cursorParam, limitParam } from '../../lib/pagination';

const dateTime = z.string().openapi({ format: 'date-time' });

export const UserSchema = z
  .object({
    id: z.string().uuid(),
    email: z.string(),
    name: z.string(),
    status: z.enum(['active', 'disabled']),
    role: z.enum(['member', 'account_admin']),
    password_updated_at: dateTime,
    last_login_at: dateTime.nullable(),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .openapi('User');

export const UserEnvelope = z.object({ user: UserSchema });

export const CreateUserBody = z
  .strictObject({
    email: z.string().openapi({ format: 'email', description: 'Trimmed and stored lowercase; not an email address is 422 unprocessable' }),
    name: z.string().optional(),
    password: z.string().openapi({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX, description: `${PASSWORD_MIN} to ${PASSWORD_MAX} characters (422 unprocessable otherwise)` }),
  })
  .openapi('CreateUser');

export const ListUsersQuery = z.object({ limit: limitParam(100, 1000), cursor: cursorParam });
export const UserList = z.object({ users: z.array(UserSchema), next_cursor: z.string().nullable() });
