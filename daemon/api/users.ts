// Login sessions and user accounts (docs/api.md, "Authentication and roles").

import type { Authentication, UserAdmin } from '../domain/accounts/index.js';
import { parseRole, type Role } from '../domain/shared/index.js';
import { badRequest } from '../http/problem.js';
import { created, noContent, ok, type Route, route } from '../http/route.js';
import { AtLeastOneOf, IdParams, T } from '../http/schema.js';
import { ApiKeySchema, AssignmentsSchema, RoleSchema, UserSchema } from './schemas.js';

const Username = T.String({ description: '3-64 characters of A-Z a-z 0-9 . _ -', errorMessage: 'must be a string' });
/** writeOnly: a secret, never to be echoed back (also in validation messages). */
const Password = T.String({ description: '8-256 characters', errorMessage: 'must be a string', writeOnly: true });

function role(value: string): Role {
  const parsed = parseRole(value);
  if (!parsed) {
    throw badRequest(`"role" must be Admin, Operator or Viewer, got ${JSON.stringify(value).slice(0, 40)}`, {
      role: ['must be Admin, Operator or Viewer'],
    });
  }
  return parsed;
}

/** Each user-admin operation checks its caller in the domain (accounts/user-admin.ts); `access` documents it. */
export function userRoutes(auth: Authentication, users: UserAdmin): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/auth/login',
      sensitive: true,
      access: 'public',
      summary: 'Sign in with username and password; returns a session token for Authorization: Bearer',
      tags: ['auth'],
      body: T.Object({
        username: T.String({ maxLength: 64, errorMessage: 'must be a string' }),
        password: T.String({
          maxLength: 1024,
          errorMessage: 'must be a string of at most 1024 characters',
          writeOnly: true,
        }),
      }),
      responses: {
        200: {
          description: 'signed in',
          schema: T.Object({
            token: T.String({ pattern: '^sst_' }),
            expiresAt: T.String({ format: 'date-time' }),
            user: UserSchema,
          }),
        },
        401: { description: 'wrong username or password, or disabled user' },
        429: { description: 'too many failed attempts; see Retry-After' },
      },
      handle: async (req) => ok(await auth.login(req.body.username, req.body.password, req.ip)),
    }),
    route({
      method: 'POST',
      path: '/api/auth/logout',
      access: 'user',
      summary: 'End the login session used for this request',
      tags: ['auth'],
      responses: { 204: { description: 'session revoked' }, 400: { description: 'the request used an API key' } },
      handle: (req) => {
        auth.logout(req.caller);
        return noContent();
      },
    }),
    route({
      method: 'GET',
      path: '/api/users/me',
      access: 'user',
      summary: 'The calling user',
      tags: ['users'],
      responses: { 200: { description: 'the user', schema: UserSchema } },
      handle: (req) => ok(users.get(req.caller, req.caller.userId)),
    }),
    route({
      method: 'GET',
      path: '/api/users',
      access: 'admin',
      summary: 'List users',
      tags: ['users'],
      responses: { 200: { description: 'all users', schema: T.Array(UserSchema) } },
      handle: (req) => ok(users.list(req.caller)),
    }),
    route({
      method: 'POST',
      path: '/api/users',
      sensitive: true,
      access: 'admin',
      summary: 'Create a user with an API key (returned once in full)',
      tags: ['users'],
      body: T.Object({
        username: Username,
        password: T.Optional(
          T.String({
            description:
              '8-256 characters; left out, the account cannot sign in with a password (it uses its API key, or is the Home Assistant bridge account) until an admin sets one',
            errorMessage: 'must be a string',
            writeOnly: true,
          }),
        ),
        role: T.String({ errorMessage: 'must be a string: Admin, Operator or Viewer' }),
        assignments: T.Optional(AssignmentsSchema),
      }),
      responses: {
        201: { description: 'created; apiKey is the full key', schema: UserSchema },
        409: { description: 'username taken' },
      },
      handle: async (req) =>
        created(
          await users.create(
            req.caller,
            {
              username: req.body.username,
              password: req.body.password,
              role: role(req.body.role),
              assignments: req.body.assignments,
            },
            // The caller may have been demoted, disabled or deleted while the password was being hashed.
            { recheck: () => req.revalidate() },
          ),
        ),
    }),
    route({
      method: 'GET',
      path: '/api/users/{id}',
      access: 'user',
      summary: 'Get a user (admin, or the user themself)',
      tags: ['users'],
      params: IdParams,
      responses: { 200: { description: 'the user', schema: UserSchema }, 403: { description: 'not admin nor self' } },
      handle: (req) => ok(users.get(req.caller, req.params.id)),
    }),
    route({
      method: 'PUT',
      path: '/api/users/{id}',
      access: 'admin',
      summary: 'Update role and/or enabled state',
      tags: ['users'],
      params: IdParams,
      body: AtLeastOneOf(
        T.Object({
          role: T.Optional(RoleSchema),
          isEnabled: T.Optional(T.Boolean({ errorMessage: 'must be true or false' })),
        }),
        ['role', 'isEnabled'],
        'send at least one of "role" and "isEnabled"',
      ),
      responses: {
        200: { description: 'the updated user', schema: UserSchema },
        400: { description: 'invalid body, or the change would leave no enabled Admin' },
      },
      handle: (req) => {
        const change: { role?: Role; isEnabled?: boolean } = {};
        if (req.body.role !== undefined) change.role = role(req.body.role);
        if (req.body.isEnabled !== undefined) change.isEnabled = req.body.isEnabled;
        return ok(users.update(req.caller, req.params.id, change));
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/users/{id}',
      access: 'admin',
      summary: 'Delete a user; its key and sessions are revoked permanently',
      tags: ['users'],
      params: IdParams,
      responses: { 204: { description: 'deleted' }, 400: { description: 'the last enabled Admin' } },
      handle: (req) => {
        users.remove(req.caller, req.params.id);
        return noContent();
      },
    }),
    route({
      method: 'GET',
      path: '/api/users/{id}/api-key',
      sensitive: true,
      access: 'admin',
      summary: "Read a user's full API key",
      tags: ['users'],
      params: IdParams,
      responses: {
        200: { description: 'the key', schema: ApiKeySchema },
        404: { description: 'no such user, or no key' },
      },
      handle: (req) => ok({ apiKey: users.getApiKey(req.caller, req.params.id) }),
    }),
    route({
      method: 'POST',
      path: '/api/users/{id}/api-key',
      sensitive: true,
      access: 'admin',
      summary: 'Regenerate the API key; the previous key stops working at once',
      tags: ['users'],
      params: IdParams,
      responses: { 200: { description: 'the new key', schema: ApiKeySchema } },
      handle: (req) => ok({ apiKey: users.regenerateApiKey(req.caller, req.params.id) }),
    }),
    route({
      method: 'DELETE',
      path: '/api/users/{id}/api-key',
      access: 'admin',
      summary: 'Revoke the API key without deleting the user',
      tags: ['users'],
      params: IdParams,
      responses: { 204: { description: 'revoked' } },
      handle: (req) => {
        users.revokeApiKey(req.caller, req.params.id);
        return noContent();
      },
    }),
    route({
      method: 'PUT',
      path: '/api/users/{id}/password',
      access: 'user',
      summary: "Change a user's password (admin, or self with currentPassword); ends that user's sessions",
      description:
        "Changing your own password (Admins too) needs `currentPassword`; an Admin resetting another user's password does " +
        'not. While an account still has the password generated at first start (`passwordChangeRequired`), a session ' +
        'may replace it without `currentPassword` (it signed in with that password); an API key may not. A wrong ' +
        '`currentPassword` counts as a failed login of that user (same throttle and 429).',
      tags: ['users'],
      params: IdParams,
      body: T.Object({
        newPassword: Password,
        currentPassword: T.Optional(
          T.String({
            maxLength: 1024,
            errorMessage: 'must be a string of at most 1024 characters',
            writeOnly: true,
            description: 'required when changing your own password (see above for the generated first-start password)',
          }),
        ),
      }),
      responses: {
        200: { description: 'changed (empty body)' },
        403: { description: 'not admin nor self, or (own password) currentPassword missing or wrong' },
        409: { description: 'the password changed while this request was checked' },
        429: { description: 'too many wrong passwords for this user or from this address; see Retry-After' },
      },
      handle: async (req) => {
        // Read before any await: the address belongs to the open response.
        const address = req.ip;
        await users.changePassword(req.caller, req.params.id, req.body, { address, recheck: () => req.revalidate() });
        return { status: 200 };
      },
    }),
    route({
      method: 'PUT',
      path: '/api/users/{id}/assignments',
      access: 'admin',
      summary: 'Replace the players and zones a user may see and control',
      tags: ['users'],
      params: IdParams,
      body: AssignmentsSchema,
      responses: { 200: { description: 'the updated user', schema: UserSchema }, 400: { description: 'unknown ids' } },
      handle: (req) => ok(users.setAssignments(req.caller, req.params.id, req.body)),
    }),
  ];
}
