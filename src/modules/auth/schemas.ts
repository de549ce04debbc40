import { Type, Timestamp, Nullable } from '../../platform/http/schemas.ts';

export const UserSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Nullable(Type.String()),
  createdAt: Timestamp,
}, { $id: 'User' });

export const TokensSchema = Type.Object({
  accessToken: Type.String(),
  refreshToken: Type.String(),
  expiresIn: Type.Integer({ description: 'access token lifetime in seconds' }),
}, { $id: 'Tokens' });

export const OrganizationSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}, { $id: 'Organization' });

const Email = Type.String({ format: 'email', maxLength: 254 });
const Password = Type.String({ minLength: 8, maxLength: 256 });

export const RegisterBody = Type.Object({
  email: Email,
  password: Password,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  organizationName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
}, { additionalProperties: false });

export const LoginBody = Type.Object({ email: Type.String({ maxLength: 254 }), password: Type.String({ maxLength: 256 }) }, { additionalProperties: false });
export const RefreshBody = Type.Object({ refreshToken: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false });
