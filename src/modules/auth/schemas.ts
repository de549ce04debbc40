import { Type, Timestamp, Nullable } from '../../platform/http/schemas.ts';

export const UserSchema = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    name: Nullable(Type.String()),
    createdAt: Timestamp,
  },
  { $id: 'User' },
);

export const TokensSchema = Type.Object(
  {
    accessToken: Type.String(),
    refreshToken: Type.Optional(
      Type.String({
        description: 'absent when the request asked for the cookie (`"cookie": true`): the refresh token is then only in the HttpOnly `refresh_token` cookie',
      }),
    ),
    expiresIn: Type.Integer({ description: 'access token lifetime in seconds' }),
  },
  { $id: 'Tokens' },
);

export const OrganizationSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Organization' },
);

const Email = Type.String({ format: 'email', maxLength: 254 });
const Password = Type.String({ minLength: 8, maxLength: 256 });
/** Any string up to the length limit: what counts as a password (CONTRACT §2) is checked by passwords.ts, with a readable reason. */
const AnyPassword = Type.String({ minLength: 1, maxLength: 256 });
const Token = Type.String({ minLength: 1, maxLength: 512 });
export const CookieFlag = Type.Optional(
  Type.Boolean({
    description:
      'true: the refresh token is set as an HttpOnly, SameSite=Strict cookie (`refresh_token`, path `/api/v1/auth`, Secure over https) and left out of the body (CONTRACT §11, for browsers)',
  }),
);

export const RegisterBody = Type.Object(
  {
    email: Email,
    password: Password,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    organizationName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    cookie: CookieFlag,
  },
  { additionalProperties: false },
);

export const LoginBody = Type.Object(
  { email: Type.String({ maxLength: 254 }), password: Type.String({ maxLength: 256 }), cookie: CookieFlag },
  { additionalProperties: false },
);
const RefreshTokenField = Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'required unless the `refresh_token` cookie is sent' }));
export const RefreshBody = Type.Object({ refreshToken: RefreshTokenField, cookie: CookieFlag }, { additionalProperties: false });
export const LogoutBody = Type.Object({ refreshToken: RefreshTokenField }, { additionalProperties: false });

export const ChangePasswordBody = Type.Object({ currentPassword: AnyPassword, newPassword: AnyPassword }, { additionalProperties: false });
export const PasswordResetBody = Type.Object({ email: Email }, { additionalProperties: false });
export const PasswordResetConfirmBody = Type.Object({ token: Token, newPassword: AnyPassword }, { additionalProperties: false });

/** The refresh cookie, as a request parameter of the routes that read it (OpenAPI). */
export const RefreshCookie = Type.Object({
  refresh_token: Type.Optional(
    Type.String({ maxLength: 512, description: 'HttpOnly cookie set by a sign-in with `"cookie": true`; used when the body has no `refreshToken`' }),
  ),
});
