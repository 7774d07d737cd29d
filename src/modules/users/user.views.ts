import type { User } from '../../../prisma/generated/client';

/** The password hash never leaves this module. */
export function userView(u: User) {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    status: u.status as 'active' | 'disabled',
    role: u.role as 'member' | 'account_admin',
    password_updated_at: u.passwordUpdatedAt.toISOString(),
    last_login_at: u.lastLoginAt?.toISOString() ?? null,
    created_at: u.createdAt.toISOString(),
    updated_at: u.updatedAt.toISOString(),
  };
}
